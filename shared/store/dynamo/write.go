package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/creatorstrategy/css/shared/store"
)

// writeAttempts bounds the rounds of a Write that restarts an expired counter (see Write).
const writeAttempts = 4

// Write applies ops: one op (but a lone Check) as a single conditional PutItem, DeleteItem or UpdateItem,
// anything else as one TransactWriteItems.
//
// An increment is an atomic ADD, which would carry on from the count of an expired counter instead of
// starting afresh. So it is sent as an ADD on a live or absent counter; when that fails on an expired one
// (DynamoDB hands back the old item), the Write is sent again with that op replacing the expired item by a
// fresh counter, conditioned on it still being expired. A counter that keeps changing between the rounds
// gives ErrConflict.
func (t *Table) Write(ctx context.Context, ops ...store.Op) error {
	if err := store.CheckOps(ops); err != nil {
		return err
	}
	_, err := t.apply(ctx, ops)
	return err
}

// Increment applies one increment as one UpdateItem (two calls when it restarts an expired counter) and
// returns the count it left. DynamoDB acknowledges only durable writes, so it is as durable as Write.
func (t *Table) Increment(ctx context.Context, op store.Op) (int64, error) {
	if op.Kind != store.OpIncr {
		return 0, fmt.Errorf("%w: Increment takes an increment, not op kind %d", errInvalid, op.Kind)
	}
	ops := []store.Op{op}
	if err := store.CheckOps(ops); err != nil {
		return 0, err
	}
	return t.apply(ctx, ops)
}

// apply sends checked ops (see Write); for a lone increment it returns the count it left.
func (t *Table) apply(ctx context.Context, ops []store.Op) (int64, error) {
	restart := make([]bool, len(ops)) // which increments go out as a fresh counter this round
	for range writeAttempts {
		now := t.now().Unix()
		reqs := make([]request, len(ops))
		for i, op := range ops {
			reqs[i] = buildRequest(op, restart[i], now)
		}
		var count int64
		var err error
		if len(ops) == 1 && ops[0].Kind != store.OpCheck {
			count, err = t.writeOne(ctx, reqs[0])
		} else {
			err = t.transact(ctx, reqs)
		}
		failed, old, err := classify(err, len(ops))
		if len(failed) == 0 {
			if err == nil && restart[0] {
				count = ops[0].Delta // a fresh counter
			}
			return count, err
		}
		for _, i := range failed {
			switch {
			case ops[i].Kind == store.OpIncr && restart[i]:
				// The expired counter changed meanwhile (deleted, or restarted by someone else): ADD again.
				restart[i] = false
			case ops[i].Kind == store.OpIncr && expiredCounter(old[i], now) && startsInBounds(ops[i]):
				restart[i] = true
			default:
				// The first op whose condition truly failed.
				return 0, &store.ConditionFailedError{Index: i}
			}
		}
	}
	return 0, fmt.Errorf("dynamo: write: a counter kept changing: %w", store.ErrConflict)
}

// classify sorts the error of one round: the indexes of the ops whose condition failed, in order, with the
// old items DynamoDB returned for them; or the error to return (nil on success).
func classify(err error, n int) ([]int, map[int]map[string]types.AttributeValue, error) {
	var ccf *types.ConditionalCheckFailedException
	var canceled *types.TransactionCanceledException
	var conflict *types.TransactionConflictException
	switch {
	case err == nil:
		return nil, nil, nil
	case errors.As(err, &ccf):
		return []int{0}, map[int]map[string]types.AttributeValue{0: ccf.Item}, err
	case errors.As(err, &canceled):
		var failed []int
		old := map[int]map[string]types.AttributeValue{}
		isConflict := false
		for i, r := range canceled.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed":
				if i < n {
					failed = append(failed, i)
					old[i] = r.Item
				}
			case "TransactionConflict":
				isConflict = true
			}
		}
		if len(failed) > 0 {
			return failed, old, err
		}
		if isConflict {
			return nil, nil, fmt.Errorf("dynamo: write: %w (%w)", store.ErrConflict, err)
		}
	case errors.As(err, &conflict):
		return nil, nil, fmt.Errorf("dynamo: write: %w (%w)", store.ErrConflict, err)
	}
	return nil, nil, fmt.Errorf("dynamo: write: %w", err)
}

// expiredCounter reports whether an old item DynamoDB returned had expired at now.
func expiredCounter(old map[string]types.AttributeValue, now int64) bool {
	if old == nil {
		return false
	}
	it, err := decodeItem(old)
	return err == nil && !live(it.ExpiresAt, now)
}

// startsInBounds reports whether an increment of a fresh counter (from 0) stays within [0, Max].
func startsInBounds(op store.Op) bool {
	return op.Delta >= 0 && (op.Max <= 0 || op.Delta <= op.Max)
}

// request is one op as DynamoDB takes it, alone or inside a transaction.
type request struct {
	kind   store.OpKind // OpPut also for a restarted counter
	key    map[string]types.AttributeValue
	item   map[string]types.AttributeValue // OpPut
	update string                          // OpIncr
	cond   string
	expr   *expr
	// keep marks a put that keeps the stored counters: sent as an update (kind OpIncr) returning nothing.
	keep bool
}

func buildRequest(op store.Op, restart bool, now int64) request {
	e := newExpr()
	r := request{kind: op.Kind, key: keyAttrs(op.Item.Key), expr: e}
	switch op.Kind {
	case store.OpPut:
		r.cond = condition(e, op, now)
		if op.KeepCounters {
			// The item's own attributes set (or removed when zero), its counters left as they are.
			r.kind, r.update, r.keep = store.OpIncr, setItem(e, op.Item), true
			break
		}
		r.item = encodeItem(op.Item)
	case store.OpDelete, store.OpCheck:
		r.cond = condition(e, op, now)
	case store.OpIncr:
		if restart {
			// A fresh counter holds only its count and expiry (and the key).
			r.kind = store.OpPut
			r.item = encodeItem(store.Item{Key: op.Item.Key, Count: op.Delta, ExpiresAt: op.Item.ExpiresAt})
			r.cond = e.name(attrTTL) + " <= " + e.value(":now", num(now))
			break
		}
		r.update = "ADD " + e.name(attrCount) + " " + e.value(":delta", num(op.Delta))
		if op.Item.ExpiresAt != 0 {
			r.update += " SET " + e.name(attrTTL) + " = " + e.value(":expires", num(op.Item.ExpiresAt))
		}
		r.cond = e.live(now) + " AND " + countBounds(e, e.name(attrCount), op)
	}
	// A ConditionCheck needs a condition; an Always check asserts nothing.
	if r.cond == "" && op.Kind == store.OpCheck {
		pk := e.name(attrPK)
		r.cond = "attribute_exists(" + pk + ") OR attribute_not_exists(" + pk + ")"
	}
	return r
}

// setItem is the update expression that writes it's data, version, count and expiry as a Put would,
// leaving any other attribute (its named counters) as stored.
func setItem(e *expr, it store.Item) string {
	var set, remove []string
	if len(it.Data) > 0 {
		set = append(set, e.name(attrData)+" = "+e.value(":d", &types.AttributeValueMemberB{Value: it.Data}))
	} else {
		remove = append(remove, e.name(attrData))
	}
	for _, a := range []struct {
		attr string
		n    int64
	}{{attrVersion, it.Version}, {attrCount, it.Count}, {attrTTL, it.ExpiresAt}} {
		if a.n != 0 {
			set = append(set, e.name(a.attr)+" = "+e.value(":set"+a.attr, num(a.n)))
		} else {
			remove = append(remove, e.name(a.attr))
		}
	}
	out := ""
	if len(set) > 0 {
		out = "SET " + strings.Join(set, ", ")
	}
	if len(remove) > 0 {
		out += " REMOVE " + strings.Join(remove, ", ")
	}
	return strings.TrimSpace(out)
}

// condition renders op.Cond; "" for Always.
func condition(e *expr, op store.Op, now int64) string {
	switch op.Cond {
	case store.IfExists:
		return "attribute_exists(" + e.name(attrPK) + ") AND " + e.live(now)
	case store.IfNotExists:
		ttl := e.name(attrTTL)
		return "(attribute_not_exists(" + e.name(attrPK) + ") OR " + ttl + " <= " + e.value(":now", num(now)) + ")"
	case store.IfVersion:
		v := e.name(attrVersion)
		// Version 0 is stored as no attribute at all.
		version := "attribute_not_exists(" + v + ")"
		if op.Version != 0 {
			version = v + " = " + e.value(":version", num(op.Version))
		}
		return "attribute_exists(" + e.name(attrPK) + ") AND " + e.live(now) + " AND " + version
	default:
		return ""
	}
}

// countBounds is the condition that n+Delta lies in [0, Max] (Max <= 0: up to the largest int64), n being
// the placeholder of a number attribute: n >= -Delta and n <= Max-Delta. An absent attribute counts 0. The
// bounds are computed without overflow; DynamoDB numbers are wider than int64.
func countBounds(e *expr, n string, op store.Op) string {
	delta := big.NewInt(op.Delta)
	upper := int64(math.MaxInt64)
	if op.Max > 0 {
		upper = op.Max
	}
	lo := new(big.Int).Neg(delta)
	hi := new(big.Int).Sub(big.NewInt(upper), delta)
	bounds := n + " >= " + e.value(":lo", &types.AttributeValueMemberN{Value: lo.String()}) +
		" AND " + n + " <= " + e.value(":hi", &types.AttributeValueMemberN{Value: hi.String()})
	if startsInBounds(op) {
		return "(attribute_not_exists(" + n + ") OR (" + bounds + "))"
	}
	return "(" + bounds + ")"
}

// AddCounter is one UpdateItem: ADD to the counter's attribute and REMOVE the dropped ones, on condition
// that the item is there, live, and the counter stays in bounds; it returns the item as written (ALL_NEW),
// or as stored when the bound failed (ALL_OLD on the condition's failure), so a caller learns the item
// either way from this one call.
func (t *Table) AddCounter(ctx context.Context, key store.Key, name string, delta, max int64, drop []string) (store.Item, error) {
	if err := store.CheckCounters(key, name, drop); err != nil {
		return store.Item{}, err
	}
	now := t.now().Unix()
	e := newExpr()
	// Counter names are [A-Za-z0-9@._-]: placeholders number them instead of quoting them.
	c := "#c0"
	e.names[c] = counterPrefix + name
	update := "ADD " + c + " " + e.value(":delta", num(delta))
	for i, d := range drop {
		p := "#c" + strconv.Itoa(i+1)
		e.names[p] = counterPrefix + d
		if i == 0 {
			update += " REMOVE " + p
		} else {
			update += ", " + p
		}
	}
	cond := "attribute_exists(" + e.name(attrPK) + ") AND " + e.live(now) + " AND " +
		countBounds(e, c, store.Op{Delta: delta, Max: max})
	in := &dynamodb.UpdateItemInput{
		TableName: &t.table, Key: keyAttrs(key), UpdateExpression: &update, ConditionExpression: &cond,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	e.into(&in.ExpressionAttributeNames, &in.ExpressionAttributeValues)
	out, err := t.api.UpdateItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	var conflict *types.TransactionConflictException
	switch {
	case errors.As(err, &conflict):
		// A transaction is rewriting the item (an account or key change): nothing applied, try again.
		return store.Item{}, fmt.Errorf("dynamo: add to counter %s of %s: %w (%w)", name, key, store.ErrConflict, err)
	case errors.As(err, &ccf):
		if ccf.Item == nil {
			return store.Item{}, store.ErrNotFound
		}
		old, err := decodeItem(ccf.Item)
		if err != nil {
			return store.Item{}, err
		}
		if !live(old.ExpiresAt, now) {
			return store.Item{}, store.ErrNotFound
		}
		return old, &store.ConditionFailedError{Index: 0}
	case err != nil:
		return store.Item{}, fmt.Errorf("dynamo: add to counter %s of %s: %w", name, key, err)
	}
	return decodeItem(out.Attributes)
}

// writeOne sends a single request; for an increment it returns the count it left.
func (t *Table) writeOne(ctx context.Context, r request) (int64, error) {
	var names map[string]string
	var values map[string]types.AttributeValue
	r.expr.into(&names, &values)
	cond := nilIfEmpty(r.cond)
	var err error
	switch r.kind {
	case store.OpPut:
		_, err = t.api.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &t.table, Item: r.item, ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		})
	case store.OpDelete:
		_, err = t.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: &t.table, Key: r.key, ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		})
	case store.OpIncr:
		in := &dynamodb.UpdateItemInput{
			TableName: &t.table, Key: r.key, UpdateExpression: &r.update, ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		}
		if r.keep {
			_, err = t.api.UpdateItem(ctx, in)
			break
		}
		in.ReturnValues = types.ReturnValueUpdatedNew
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		out, err := t.api.UpdateItem(ctx, in)
		if err != nil {
			return 0, err
		}
		count, err := decodeNumber(out.Attributes[attrCount])
		if err != nil {
			return 0, fmt.Errorf("dynamo: the count of %s: %w", r.key[attrPK], err)
		}
		return count, nil
	}
	return 0, err
}

// transact sends the requests as one transaction.
func (t *Table) transact(ctx context.Context, reqs []request) error {
	items := make([]types.TransactWriteItem, len(reqs))
	for i, r := range reqs {
		var names map[string]string
		var values map[string]types.AttributeValue
		r.expr.into(&names, &values)
		cond := nilIfEmpty(r.cond)
		switch r.kind {
		case store.OpPut:
			items[i].Put = &types.Put{
				TableName: &t.table, Item: r.item, ConditionExpression: cond,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			}
		case store.OpDelete:
			items[i].Delete = &types.Delete{
				TableName: &t.table, Key: r.key, ConditionExpression: cond,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			}
		case store.OpCheck:
			items[i].ConditionCheck = &types.ConditionCheck{
				TableName: &t.table, Key: r.key, ConditionExpression: cond,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			}
		case store.OpIncr:
			items[i].Update = &types.Update{
				TableName: &t.table, Key: r.key, UpdateExpression: &r.update, ConditionExpression: cond,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values,
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			}
		}
	}
	_, err := t.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return err
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
