package dynamo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/storetest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// localClient returns a client of the test binary's DynamoDB Local.
func localClient(t *testing.T) *dynamodb.Client {
	t.Helper()
	c, err := NewClient(emulatortest.DynamoDB(t), "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// freshTable creates a table of its own for t on DynamoDB Local and deletes it afterwards.
func freshTable(t *testing.T, c *dynamodb.Client) string {
	t.Helper()
	name := "css-test-" + rand.Text()
	if err := CreateTable(t.Context(), c, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context() is already canceled when cleanups run.
		if _, err := c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}); err != nil {
			t.Errorf("delete table %s: %v", name, err)
		}
	})
	return name
}

func TestConformance(t *testing.T) {
	c := localClient(t)
	storetest.Run(t, func(t *testing.T) store.Table {
		return New(c, freshTable(t, c))
	})
}

func TestResearchConformance(t *testing.T) {
	c := localClient(t)
	storetest.RunResearch(t, func(t *testing.T, now func() time.Time) store.Table {
		return New(c, freshTable(t, c), WithClock(now))
	})
}

func TestConnectionConformance(t *testing.T) {
	c := localClient(t)
	storetest.RunConnection(t, func(t *testing.T, now func() time.Time) store.Table {
		return New(c, freshTable(t, c), WithClock(now))
	})
}

func TestCreateTableMatchesTemplate(t *testing.T) {
	c := localClient(t)
	name := freshTable(t, c)
	desc, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	tbl := desc.Table
	if tbl.TableStatus != types.TableStatusActive {
		t.Errorf("status %s; want ACTIVE once CreateTable returns", tbl.TableStatus)
	}
	keys := map[string]types.KeyType{}
	for _, k := range tbl.KeySchema {
		keys[aws.ToString(k.AttributeName)] = k.KeyType
	}
	if want := map[string]types.KeyType{"PK": types.KeyTypeHash, "SK": types.KeyTypeRange}; !maps.Equal(keys, want) {
		t.Errorf("key schema %v; want %v", keys, want)
	}
	attrs := map[string]types.ScalarAttributeType{}
	for _, a := range tbl.AttributeDefinitions {
		attrs[aws.ToString(a.AttributeName)] = a.AttributeType
	}
	if want := map[string]types.ScalarAttributeType{"PK": "S", "SK": "S"}; !maps.Equal(attrs, want) {
		t.Errorf("attributes %v; want %v", attrs, want)
	}
	if tbl.BillingModeSummary == nil || tbl.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing %+v; want PAY_PER_REQUEST", tbl.BillingModeSummary)
	}
	if len(tbl.GlobalSecondaryIndexes) != 0 || len(tbl.LocalSecondaryIndexes) != 0 {
		t.Errorf("table has indexes; the store needs none")
	}
	ttl, err := c.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != "ttl" ||
		d.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Errorf("TTL %+v; want enabled on ttl", d)
	}
}

// TestStoredAttributes pins the item layout other tools (and the TTL) rely on.
func TestStoredAttributes(t *testing.T) {
	c := localClient(t)
	name := freshTable(t, c)
	tbl := New(c, name)
	k := store.Key{PK: "P", SK: "S"}
	get := func() map[string]types.AttributeValue {
		out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: &name, Key: keyAttrs(k), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	full := store.Item{Key: k, Data: []byte("{}"), Version: 2, Count: 3, ExpiresAt: 4_000_000_000}
	if err := tbl.Write(t.Context(), store.Put(full, store.Always)); err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		"PK": str("P"), "SK": str("S"), "d": &types.AttributeValueMemberB{Value: []byte("{}")},
		"v": num(2), "n": num(3), "ttl": num(4_000_000_000),
	}
	if got := get(); !sameAttrs(got, want) {
		t.Errorf("stored %v; want %v", got, want)
	}
	if err := tbl.Write(t.Context(), store.Put(store.Item{Key: k}, store.Always)); err != nil {
		t.Fatal(err)
	}
	if got, want := get(), keyAttrs(k); !sameAttrs(got, want) {
		t.Errorf("stored %v; want only the key (zero fields left out)", got)
	}
}

func sameAttrs(a, b map[string]types.AttributeValue) bool {
	return maps.EqualFunc(a, b, func(x, y types.AttributeValue) bool {
		switch x := x.(type) {
		case *types.AttributeValueMemberS:
			y, ok := y.(*types.AttributeValueMemberS)
			return ok && x.Value == y.Value
		case *types.AttributeValueMemberN:
			y, ok := y.(*types.AttributeValueMemberN)
			return ok && x.Value == y.Value
		case *types.AttributeValueMemberB:
			y, ok := y.(*types.AttributeValueMemberB)
			return ok && string(x.Value) == string(y.Value)
		}
		return false
	})
}

// TestClock: expiry is judged by the injected clock, in reads and in conditions.
func TestClock(t *testing.T) {
	c := localClient(t)
	name := freshTable(t, c)
	now := time.Unix(2_000_000_000, 0)
	late := New(c, name, WithClock(func() time.Time { return now }))
	k := store.Key{PK: "P", SK: "S"}
	// Live by the wall clock, expired by the injected one.
	it := store.Item{Key: k, Data: []byte("x"), ExpiresAt: now.Unix()}
	if err := New(c, name).Write(t.Context(), store.Put(it, store.Always)); err != nil {
		t.Fatal(err)
	}
	if _, err := late.Get(t.Context(), k); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get = %v; want ErrNotFound at the injected time", err)
	}
	if page, err := late.Query(t.Context(), store.Query{PK: "P"}); err != nil || len(page.Items) != 0 {
		t.Errorf("Query = %d items, %v; want none at the injected time", len(page.Items), err)
	}
	if err := late.Write(t.Context(), store.Put(store.Item{Key: k, Data: []byte("y")}, store.IfNotExists)); err != nil {
		t.Errorf("Put IfNotExists over the expired item: %v", err)
	}
}

// countingAPI counts the calls made through it.
type countingAPI struct {
	API
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingAPI) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
}

func (c *countingAPI) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := maps.Clone(c.calls)
	clear(c.calls)
	return s
}

func (c *countingAPI) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count("GetItem")
	return c.API.GetItem(ctx, in, o...)
}

func (c *countingAPI) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.count("BatchGetItem")
	return c.API.BatchGetItem(ctx, in, o...)
}

func (c *countingAPI) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.count("Query")
	return c.API.Query(ctx, in, o...)
}

func (c *countingAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	return c.API.PutItem(ctx, in, o...)
}

func (c *countingAPI) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count("DeleteItem")
	return c.API.DeleteItem(ctx, in, o...)
}

func (c *countingAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	return c.API.UpdateItem(ctx, in, o...)
}

func (c *countingAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.count("TransactWriteItems")
	return c.API.TransactWriteItems(ctx, in, o...)
}

// TestCalls pins how many DynamoDB calls each operation costs.
func TestCalls(t *testing.T) {
	c := localClient(t)
	api := &countingAPI{API: c, calls: map[string]int{}}
	tbl := New(api, freshTable(t, c))
	ctx := t.Context()
	a, b := store.Key{PK: "P", SK: "A"}, store.Key{PK: "P", SK: "B"}
	counter := store.Key{PK: "P", SK: "COUNT"}
	cases := []struct {
		name string
		do   func() error
		want map[string]int
	}{
		{"single put", func() error {
			return tbl.Write(ctx, store.Put(store.Item{Key: a, Data: []byte("a")}, store.IfNotExists))
		},
			map[string]int{"PutItem": 1}},
		{"get", func() error { _, err := tbl.Get(ctx, a); return err },
			map[string]int{"GetItem": 1}},
		{"get many", func() error { _, err := tbl.GetMany(ctx, []store.Key{a, b, counter}); return err },
			map[string]int{"BatchGetItem": 1}},
		{"query", func() error { _, err := tbl.Query(ctx, store.Query{PK: "P", Limit: 1}); return err },
			map[string]int{"Query": 1}},
		{"single incr", func() error { return tbl.Write(ctx, store.Incr(counter, 1, 10)) },
			map[string]int{"UpdateItem": 1}},
		{"single delete", func() error { return tbl.Write(ctx, store.Delete(b, store.Always)) },
			map[string]int{"DeleteItem": 1}},
		{"lone check", func() error { return tbl.Write(ctx, store.Check(a, store.IfExists)) },
			map[string]int{"TransactWriteItems": 1}},
		{"several ops", func() error {
			return tbl.Write(ctx, store.Incr(counter, 1, 10), store.Put(store.Item{Key: b}, store.IfNotExists),
				store.PutIfVersion(store.Item{Key: a}, 0))
		}, map[string]int{"TransactWriteItems": 1}},
		{"failed condition", func() error {
			if err := tbl.Write(ctx, store.Check(a, store.IfNotExists), store.Delete(b, store.Always)); store.FailedOp(err) != 0 {
				return err
			}
			return nil
		}, map[string]int{"TransactWriteItems": 1}},
		{"malformed write", func() error {
			if err := tbl.Write(ctx, store.Put(store.Item{Key: a}, store.Always), store.Delete(a, store.Always)); err == nil {
				return errors.New("no error")
			}
			return nil
		}, map[string]int{}},
		{"expired counter restarts", func() error {
			if err := tbl.Write(ctx, store.Put(store.Item{Key: counter, Count: 5, ExpiresAt: 1}, store.Always)); err != nil {
				return err
			}
			api.snapshot()
			return tbl.Write(ctx, store.Incr(counter, 1, 10))
		}, map[string]int{"UpdateItem": 1, "PutItem": 1}},
		{"expired counter restarts in a transaction", func() error {
			if err := tbl.Write(ctx, store.Put(store.Item{Key: counter, Count: 5, ExpiresAt: 1}, store.Always)); err != nil {
				return err
			}
			api.snapshot()
			if err := tbl.Write(ctx, store.Incr(counter, 2, 10), store.Check(a, store.IfExists)); err != nil {
				return err
			}
			if it, err := tbl.Get(ctx, counter); err != nil || it.Count != 2 || it.ExpiresAt != 0 {
				return fmt.Errorf("counter after the restart = %+v, %v; want a fresh count of 2", it, err)
			}
			return nil
		}, map[string]int{"TransactWriteItems": 2, "GetItem": 1}},
	}
	for _, tc := range cases {
		api.snapshot()
		if err := tc.do(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := api.snapshot(); !maps.Equal(got, tc.want) {
			t.Errorf("%s: calls %v; want %v", tc.name, got, tc.want)
		}
	}
}

// scriptedAPI answers writes with a fixed error, to map DynamoDB's failures without provoking them.
type scriptedAPI struct {
	API
	err error
}

func (s scriptedAPI) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, s.err
}

func (s scriptedAPI) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, s.err
}

func (s scriptedAPI) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, s.err
}

// A lease's UpdateItem refused because a transaction holds the item (an account or key change) is a
// conflict to try again, not a failure.
func TestAddCounterConflict(t *testing.T) {
	k := store.Key{PK: "P", SK: "A"}
	_, err := New(scriptedAPI{err: &types.TransactionConflictException{}}, "t").AddCounter(t.Context(), k, "other@60", 1, 10, nil)
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("AddCounter against a transaction: %v; want ErrConflict", err)
	}
	throttled := &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
	if _, err := New(scriptedAPI{err: throttled}, "t").AddCounter(t.Context(), k, "other@60", 1, 10, nil); errors.Is(err, store.ErrConflict) || !errors.Is(err, throttled) {
		t.Errorf("AddCounter throttled: %v; want the throttling error", err)
	}
}

func TestWriteErrors(t *testing.T) {
	reasons := func(codes ...string) error {
		e := &types.TransactionCanceledException{Message: aws.String("canceled")}
		for _, c := range codes {
			e.CancellationReasons = append(e.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
		}
		return e
	}
	throttled := &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
	invalid := reasons("ValidationError", "None")
	put := func(sk string) store.Op {
		return store.Put(store.Item{Key: store.Key{PK: "P", SK: sk}}, store.IfNotExists)
	}
	cases := []struct {
		name       string
		ops        []store.Op
		err        error
		wantFailed int // -1: not a condition failure
		wantIs     error
	}{
		{"conditional check failed", []store.Op{put("A")}, &types.ConditionalCheckFailedException{}, 0, store.ErrConditionFailed},
		{"first failing reason", []store.Op{put("A"), put("B"), put("C")},
			reasons("None", "ConditionalCheckFailed", "ConditionalCheckFailed"), 1, store.ErrConditionFailed},
		{"condition failure beats conflict", []store.Op{put("A"), put("B")},
			reasons("TransactionConflict", "ConditionalCheckFailed"), 1, store.ErrConditionFailed},
		{"transaction conflict", []store.Op{put("A"), put("B")}, reasons("None", "TransactionConflict"), -1, store.ErrConflict},
		{"single write against a transaction", []store.Op{put("A")}, &types.TransactionConflictException{}, -1, store.ErrConflict},
		{"other cancellation", []store.Op{put("A"), put("B")}, invalid, -1, invalid},
		{"other error", []store.Op{put("A")}, throttled, -1, throttled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := New(scriptedAPI{err: c.err}, "t").Write(t.Context(), c.ops...)
			if got := store.FailedOp(err); got != c.wantFailed {
				t.Errorf("FailedOp(%v) = %d; want %d", err, got, c.wantFailed)
			}
			if !errors.Is(err, c.wantIs) {
				t.Errorf("error %v; want it to match %v", err, c.wantIs)
			}
		})
	}
}

// batchAPI answers BatchGetItem from a script of outputs and records the keys asked for.
type batchAPI struct {
	API
	outputs []*dynamodb.BatchGetItemOutput
	asked   [][]store.Key
}

func (b *batchAPI) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	var keys []store.Key
	for _, k := range in.RequestItems["t"].Keys {
		keys = append(keys, store.Key{PK: k["PK"].(*types.AttributeValueMemberS).Value, SK: k["SK"].(*types.AttributeValueMemberS).Value})
	}
	b.asked = append(b.asked, keys)
	if len(b.outputs) == 0 {
		return nil, errors.New("unexpected BatchGetItem")
	}
	out := b.outputs[0]
	b.outputs = b.outputs[1:]
	return out, nil
}

func TestGetManyRetriesUnprocessedKeys(t *testing.T) {
	a, b, c := store.Key{PK: "P", SK: "A"}, store.Key{PK: "P", SK: "B"}, store.Key{PK: "P", SK: "C"}
	item := func(k store.Key) map[string]types.AttributeValue {
		return encodeItem(store.Item{Key: k, Data: []byte(k.SK)})
	}
	unprocessed := func(keys ...store.Key) map[string]types.KeysAndAttributes {
		var avs []map[string]types.AttributeValue
		for _, k := range keys {
			avs = append(avs, keyAttrs(k))
		}
		return map[string]types.KeysAndAttributes{"t": {Keys: avs, ConsistentRead: aws.Bool(true)}}
	}
	api := &batchAPI{outputs: []*dynamodb.BatchGetItemOutput{
		{Responses: map[string][]map[string]types.AttributeValue{"t": {item(b)}}, UnprocessedKeys: unprocessed(a, c)},
		{UnprocessedKeys: unprocessed(c)},
		{Responses: map[string][]map[string]types.AttributeValue{"t": {item(c)}}},
	}}
	tbl := New(api, "t")
	tbl.batchBackoff = 0
	got, err := tbl.GetMany(t.Context(), []store.Key{c, a, b})
	if err != nil {
		t.Fatal(err)
	}
	var sks []string
	for _, it := range got {
		sks = append(sks, it.SK+"="+string(it.Data))
	}
	if strings.Join(sks, ",") != "C=C,B=B" {
		t.Errorf("GetMany = %v; want C and B, in the order asked, A being absent", sks)
	}
	want := [][]store.Key{{c, a, b}, {a, c}, {c}}
	if !slices.EqualFunc(api.asked, want, slices.Equal) {
		t.Errorf("asked %v; want %v (the unprocessed keys again)", api.asked, want)
	}

	t.Run("gives up", func(t *testing.T) {
		outputs := make([]*dynamodb.BatchGetItemOutput, batchGetAttempts)
		for i := range outputs {
			outputs[i] = &dynamodb.BatchGetItemOutput{UnprocessedKeys: unprocessed(a)}
		}
		api := &batchAPI{outputs: outputs}
		tbl := New(api, "t")
		tbl.batchBackoff = 0
		if _, err := tbl.GetMany(t.Context(), []store.Key{a}); err == nil {
			t.Fatal("no error while keys stay unprocessed")
		}
		if len(api.asked) != batchGetAttempts {
			t.Errorf("%d attempts; want %d", len(api.asked), batchGetAttempts)
		}
	})
}

// TestClientCredentials checks where NewClient's credentials come from: dummy ones for an endpoint, the
// environment (as Lambda sets it) otherwise, and a clear error when the environment has none.
func TestClientCredentials(t *testing.T) {
	local, err := NewClient("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := local.Options().Credentials.Retrieve(t.Context()); err != nil || got.AccessKeyID != "local" {
		t.Fatalf("endpoint client credentials = %+v, %v; want the dummy local ones", got, err)
	}
	if _, err := NewClient("", ""); err == nil {
		t.Fatal("a client without endpoint or region was created")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	c, err := NewClient("", "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Options().Credentials.Retrieve(t.Context())
	if err != nil || got.AccessKeyID != "AKIAEXAMPLE" || got.SecretAccessKey != "secret" || got.SessionToken != "token" {
		t.Fatalf("environment credentials = %+v, %v", got, err)
	}
	if c.Options().Region != "eu-west-1" {
		t.Fatalf("region = %q", c.Options().Region)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	c, _ = NewClient("", "eu-west-1")
	if _, err := c.Options().Credentials.Retrieve(t.Context()); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Fatalf("without credentials in the environment: %v; want an error naming them", err)
	}
}
