package store

import (
	"context"
	"errors"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
)

// conflicting fails its first n writes with ErrConflict, as DynamoDB does when transactions race.
type conflicting struct {
	Table
	n, writes int
}

func (c *conflicting) Write(context.Context, ...Op) error {
	c.writes++
	if c.writes <= c.n {
		return ErrConflict
	}
	return nil
}

func TestWriteRetriesConflictsThenAnswersConflict(t *testing.T) {
	s := New(&conflicting{n: conflictRetries - 1})
	if err := s.write(context.Background(), Put(Item{Key: Key{PK: "p", SK: "s"}}, Always)); err != nil {
		t.Fatalf("a write that wins on its last try: %v", err)
	}
	c := &conflicting{n: conflictRetries}
	err := New(c).write(context.Background(), Put(Item{Key: Key{PK: "p", SK: "s"}}, Always))
	if apperr.CodeOf(err) != apperr.Conflict || !errors.Is(err, ErrConflict) || c.writes != conflictRetries {
		t.Fatalf("after %d conflicts: %v (%d writes); want CONFLICT", conflictRetries, err, c.writes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := New(&conflicting{n: 99}).write(ctx, Put(Item{Key: Key{PK: "p", SK: "s"}}, Always)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled request keeps retrying: %v", err)
	}
}
