// Package dynamo is the DynamoDB adapter of the store.Table port: one table keyed by PK (S) and SK (S),
// with the item's attributes d (Data, B), v (Version, N), n (Count, N) and ttl (ExpiresAt, N, the table's
// TTL attribute), each left out when empty or zero, and one attribute c#<name> (N) per named counter.
//
// DynamoDB deletes expired items only eventually, so every read filters them out and every condition
// treats them as absent. Reads are strongly consistent: the API promises read-your-writes.
package dynamo

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/creatorstrategy/css/shared/store"
)

// API is the part of *dynamodb.Client the adapter uses (declared here so tests can count calls).
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Attribute names of an item.
const (
	attrPK      = "PK"
	attrSK      = "SK"
	attrData    = "d"
	attrVersion = "v"
	attrCount   = "n"
	attrTTL     = "ttl"
	// counterPrefix leads the attribute of each named counter.
	counterPrefix = "c#"
)

// errInvalid marks calls that break the port's rules (empty key parts, too many keys or ops, a key twice).
var errInvalid = store.ErrInvalidCall

// Table is a store.Table on one DynamoDB table.
type Table struct {
	api   API
	table string
	now   func() time.Time
	// batchBackoff is the first pause before asking again for unprocessed keys (tests set 0).
	batchBackoff time.Duration
}

var _ store.Table = (*Table)(nil)

// Option configures a Table.
type Option func(*Table)

// WithClock sets the clock that decides which items have expired (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(t *Table) { t.now = now }
}

// New returns the adapter for the named table. It makes no call until used.
func New(client API, table string, opts ...Option) *Table {
	t := &Table{api: client, table: table, now: time.Now, batchBackoff: batchGetBackoff}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Get returns the live item at key.
func (t *Table) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if err := store.CheckKey(key); err != nil {
		return store.Item{}, err
	}
	out, err := t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &t.table,
		Key:            keyAttrs(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s: %w", key, err)
	}
	if out.Item == nil {
		return store.Item{}, store.ErrNotFound
	}
	it, err := decodeItem(out.Item)
	if err != nil {
		return store.Item{}, err
	}
	if !live(it.ExpiresAt, t.now().Unix()) {
		return store.Item{}, store.ErrNotFound
	}
	return it, nil
}

// Bounds of the retries of a BatchGetItem's UnprocessedKeys (DynamoDB returns some under throttling or
// past 16 MB of response).
const (
	batchGetAttempts = 8
	batchGetBackoff  = 25 * time.Millisecond
	batchGetMaxWait  = time.Second
)

// GetMany returns the live items at keys, in the order of keys.
func (t *Table) GetMany(ctx context.Context, keys []store.Key) ([]store.Item, error) {
	if len(keys) > store.MaxBatchGet {
		return nil, fmt.Errorf("%w: %d keys, at most %d", errInvalid, len(keys), store.MaxBatchGet)
	}
	if err := store.CheckKeys(keys); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, nil
	}
	avs := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		avs[i] = keyAttrs(k)
	}
	request := map[string]types.KeysAndAttributes{t.table: {Keys: avs, ConsistentRead: aws.Bool(true)}}
	found := make(map[store.Key]store.Item, len(keys))
	for attempt := 1; ; attempt++ {
		out, err := t.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: request})
		if err != nil {
			return nil, fmt.Errorf("dynamo: get %d items: %w", len(keys), err)
		}
		for _, av := range out.Responses[t.table] {
			it, err := decodeItem(av)
			if err != nil {
				return nil, err
			}
			found[it.Key] = it
		}
		rest := out.UnprocessedKeys[t.table]
		if len(rest.Keys) == 0 {
			break
		}
		if attempt == batchGetAttempts {
			return nil, fmt.Errorf("dynamo: get %d items: %d still unprocessed after %d attempts", len(keys), len(rest.Keys), attempt)
		}
		if err := sleep(ctx, min(t.batchBackoff<<(attempt-1), batchGetMaxWait)); err != nil {
			return nil, fmt.Errorf("dynamo: get %d items: %w", len(keys), err)
		}
		request = out.UnprocessedKeys
	}
	now := t.now().Unix()
	items := make([]store.Item, 0, len(found))
	for _, k := range keys {
		if it, ok := found[k]; ok && live(it.ExpiresAt, now) {
			items = append(items, it)
		}
	}
	return items, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Query returns one page of the live items of q.PK whose SK starts with q.Prefix. DynamoDB applies Limit
// before it filters out expired items, so a page may come back short (even empty) with a cursor.
func (t *Table) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if q.PK == "" {
		return store.Page{}, fmt.Errorf("%w: query without a partition key", errInvalid)
	}
	if q.Limit < 0 {
		return store.Page{}, fmt.Errorf("%w: negative limit %d", errInvalid, q.Limit)
	}
	e := newExpr()
	keyCond := e.name(attrPK) + " = " + e.value(":pk", str(q.PK))
	if q.Prefix != "" {
		keyCond += " AND begins_with(" + e.name(attrSK) + ", " + e.value(":prefix", str(q.Prefix)) + ")"
	}
	in := &dynamodb.QueryInput{
		TableName:              &t.table,
		ConsistentRead:         aws.Bool(true),
		ScanIndexForward:       aws.Bool(!q.Desc),
		KeyConditionExpression: &keyCond,
		FilterExpression:       aws.String(e.live(t.now().Unix())),
	}
	e.into(&in.ExpressionAttributeNames, &in.ExpressionAttributeValues)
	if q.Limit > 0 {
		in.Limit = aws.Int32(int32(min(q.Limit, math.MaxInt32)))
	}
	if q.Cursor != "" {
		sk, err := store.DecodeCursor(q.Cursor)
		if err != nil {
			return store.Page{}, err
		}
		// DynamoDB would reject a start key outside the key condition anyway, but as a validation error.
		if !strings.HasPrefix(sk, q.Prefix) {
			return store.Page{}, store.ErrBadCursor
		}
		in.ExclusiveStartKey = keyAttrs(store.Key{PK: q.PK, SK: sk})
	}
	out, err := t.api.Query(ctx, in)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo: query %s %q: %w", q.PK, q.Prefix, err)
	}
	page := store.Page{Items: make([]store.Item, 0, len(out.Items))}
	for _, av := range out.Items {
		it, err := decodeItem(av)
		if err != nil {
			return store.Page{}, err
		}
		page.Items = append(page.Items, it)
	}
	if out.LastEvaluatedKey != nil {
		sk, ok := out.LastEvaluatedKey[attrSK].(*types.AttributeValueMemberS)
		if !ok {
			return store.Page{}, fmt.Errorf("dynamo: query %s: last evaluated key without a string SK", q.PK)
		}
		page.Next = store.EncodeCursor(sk.Value)
	}
	return page, nil
}

// live reports whether an item with this expiry is still there at now (Unix seconds).
func live(expiresAt, now int64) bool { return expiresAt == 0 || expiresAt > now }

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func keyAttrs(k store.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(k.PK), attrSK: str(k.SK)}
}

// encodeItem is the whole item as stored, zero fields left out.
func encodeItem(it store.Item) map[string]types.AttributeValue {
	av := keyAttrs(it.Key)
	if len(it.Data) > 0 {
		av[attrData] = &types.AttributeValueMemberB{Value: it.Data}
	}
	for name, n := range map[string]int64{attrVersion: it.Version, attrCount: it.Count, attrTTL: it.ExpiresAt} {
		if n != 0 {
			av[name] = num(n)
		}
	}
	for name, n := range it.Counters {
		av[counterPrefix+name] = num(n)
	}
	return av
}

func decodeItem(av map[string]types.AttributeValue) (store.Item, error) {
	var it store.Item
	for name, v := range av {
		var err error
		switch name {
		case attrPK:
			it.PK, err = decodeString(v)
		case attrSK:
			it.SK, err = decodeString(v)
		case attrData:
			b, ok := v.(*types.AttributeValueMemberB)
			if !ok {
				err = fmt.Errorf("not binary (%T)", v)
			} else if len(b.Value) > 0 {
				it.Data = b.Value
			}
		case attrVersion:
			it.Version, err = decodeNumber(v)
		case attrCount:
			it.Count, err = decodeNumber(v)
		case attrTTL:
			it.ExpiresAt, err = decodeNumber(v)
		default:
			if counter, ok := strings.CutPrefix(name, counterPrefix); ok {
				var n int64
				if n, err = decodeNumber(v); err == nil {
					if it.Counters == nil {
						it.Counters = map[string]int64{}
					}
					it.Counters[counter] = n
				}
			}
		}
		if err != nil {
			return store.Item{}, fmt.Errorf("dynamo: attribute %s of item %s: %w", name, it.Key, err)
		}
	}
	if it.PK == "" || it.SK == "" {
		return store.Item{}, fmt.Errorf("dynamo: item without a key")
	}
	return it, nil
}

func decodeString(v types.AttributeValue) (string, error) {
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("not a string (%T)", v)
	}
	return s.Value, nil
}

func decodeNumber(v types.AttributeValue) (int64, error) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("not a number (%T)", v)
	}
	return strconv.ParseInt(n.Value, 10, 64)
}

// expr collects the placeholders of one request's expressions: DynamoDB rejects any that goes unused.
type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// name returns the placeholder of an attribute name (some, like ttl, are reserved words).
func (e *expr) name(attr string) string {
	p := "#" + attr
	e.names[p] = attr
	return p
}

func (e *expr) value(placeholder string, v types.AttributeValue) string {
	e.values[placeholder] = v
	return placeholder
}

// live is the condition that the item, if any, has not expired at now.
func (e *expr) live(now int64) string {
	ttl := e.name(attrTTL)
	return "(attribute_not_exists(" + ttl + ") OR " + ttl + " > " + e.value(":now", num(now)) + ")"
}

// into sets a request's placeholder maps, leaving them nil when empty (DynamoDB rejects empty maps).
func (e *expr) into(names *map[string]string, values *map[string]types.AttributeValue) {
	if len(e.names) > 0 {
		*names = e.names
	}
	if len(e.values) > 0 {
		*values = e.values
	}
}

// scanAPI is the Scan call PartitionsWith needs beyond API (a migration's, never a request's).
type scanAPI interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ store.Scanner = (*Table)(nil)

// PartitionsWith returns the PKs starting with pkPrefix that hold a live item at SK sk: a Scan of the whole
// table (every item is read and paid for), filtered to those keys.
func (t *Table) PartitionsWith(ctx context.Context, pkPrefix, sk string) ([]string, error) {
	api, ok := t.api.(scanAPI)
	if !ok {
		return nil, fmt.Errorf("dynamo: scan: the client cannot Scan")
	}
	e := newExpr()
	filter := e.name(attrSK) + " = " + e.value(":sk", str(sk)) + " AND begins_with(" + e.name(attrPK) + ", " +
		e.value(":prefix", str(pkPrefix)) + ") AND " + e.live(t.now().Unix())
	in := &dynamodb.ScanInput{TableName: &t.table, ConsistentRead: aws.Bool(true), FilterExpression: &filter,
		ProjectionExpression: aws.String(e.name(attrPK))}
	e.into(&in.ExpressionAttributeNames, &in.ExpressionAttributeValues)
	var out []string
	for {
		page, err := api.Scan(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("dynamo: scan for %q: %w", sk, err)
		}
		for _, av := range page.Items {
			if pk, ok := av[attrPK].(*types.AttributeValueMemberS); ok {
				out = append(out, pk.Value)
			}
		}
		if page.LastEvaluatedKey == nil {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
