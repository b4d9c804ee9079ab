package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Generation bookkeeping:
//
//	CH#<channel>   IDEM#<key>            an Idempotency-Key: the request's fingerprint and its run, expiring
//	                                     a day after (decision 17)
//	ACCT#<account> USAGE#<YYYY-MM>       the account's generations of the month (counter, decision 7)

const (
	prefixIdempotency = "IDEM#"
	prefixUsage       = "USAGE#"
	skTokensIn        = "#IN"
	skTokensOut       = "#OUT"
)

type idempotencyRecord struct {
	Fingerprint string `json:"fingerprint"`
	RunID       string `json:"runId"`
}

// ClaimIdempotencyKey records key → (fingerprint, runID) until the given time unless a live claim holds
// the key: then it returns that claim. One conditional put; a lost race reads the winner's claim.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, channelID, key, fingerprint, runID string, until time.Time) (string, string, bool, error) {
	k := channelKey(channelID, prefixIdempotency+key)
	item, err := encode(k, idempotencyRecord{Fingerprint: fingerprint, RunID: runID})
	if err != nil {
		return "", "", false, err
	}
	item.ExpiresAt = until.Unix()
	err = s.t.Write(ctx, Put(item, IfNotExists))
	if err == nil {
		return "", "", true, nil
	}
	if !errors.Is(err, ErrConditionFailed) {
		return "", "", false, err
	}
	var held idempotencyRecord
	if _, err := s.getJSON(ctx, k, &held); err != nil {
		return "", "", false, fmt.Errorf("idempotency key: %w", err)
	}
	return held.Fingerprint, held.RunID, false, nil
}

func usageKey(accountID, month string) Key {
	return Key{PK: accountPK(accountID), SK: prefixUsage + month}
}

// AddGeneration adds delta to the account's generations of month unless the count would leave [0, max]:
// one conditional increment.
func (s *Store) AddGeneration(ctx context.Context, accountID, month string, delta, max int64) (int64, bool, error) {
	count, err := s.t.Increment(ctx, Incr(usageKey(accountID, month), delta, max))
	if errors.Is(err, ErrConditionFailed) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return count, true, nil
}

// AddGenerationTokens adds the tokens a generation's model calls were billed for, failed or not, to the
// account's month (issue 19 item 4; GET /me shows them).
func (s *Store) AddGenerationTokens(ctx context.Context, accountID, month string, in, out int) error {
	for _, c := range []struct {
		suffix string
		n      int
	}{{skTokensIn, in}, {skTokensOut, out}} {
		if c.n <= 0 {
			continue
		}
		if _, err := s.t.Increment(ctx, Incr(Key{PK: accountPK(accountID), SK: prefixUsage + month + c.suffix}, int64(c.n), 0)); err != nil {
			return err
		}
	}
	return nil
}

// GenerationUsage returns the account's generations of month and the tokens they were billed for, each
// read with one GetItem (the API functions' grant on the account partition).
func (s *Store) GenerationUsage(ctx context.Context, accountID, month string) (generations, inputTokens, outputTokens int64, err error) {
	var out [3]int64
	for i, sk := range []string{prefixUsage + month, prefixUsage + month + skTokensIn, prefixUsage + month + skTokensOut} {
		it, err := s.t.Get(ctx, Key{PK: accountPK(accountID), SK: sk})
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, 0, 0, err
		}
		out[i] = it.Count
	}
	return out[0], out[1], out[2], nil
}
