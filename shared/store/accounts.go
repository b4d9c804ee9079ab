package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
)

// Access patterns of accounts, channels and API keys (accounts.Repository and auth.Directory).

const (
	skKeyHash = "KEY"
	// keysCounter counts an account's live keys; it moves in the transactions that create and revoke keys.
	keysCounter = "keys"
	// versionRetries bounds how often a read-modify-write of one item is tried again after a concurrent
	// change of that item got in first.
	versionRetries = 8
)

func keyHashPK(hash string) string          { return "KEYHASH#" + hash }
func keyHashKey(hash string) Key            { return Key{PK: keyHashPK(hash), SK: skKeyHash} }
func apiKeyKey(accountID, keyID string) Key { return accountKey(accountID, prefixKey+keyID) }
func liveKeysCounter(accountID string) Key  { return counterKey(accountPK(accountID), keysCounter) }

// accountRecord is an account, format 2.
type accountRecord struct {
	ID          string    `json:"id"`
	AccessUntil time.Time `json:"accessUntil"`
	ChannelIDs  []string  `json:"channelIds"`
	CreatedAt   time.Time `json:"createdAt"`
}

// channelRecord is a channel's metadata, format 2.
type channelRecord struct {
	ID        string    `json:"id"`
	AccountID string    `json:"accountId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// keyItem is the stored API key: what clients see plus the account and the hash.
type keyItem struct {
	ID        string     `json:"id"`
	AccountID string     `json:"accountId"`
	ChannelID string     `json:"channelId"`
	Name      string     `json:"name,omitempty"`
	Prefix    string     `json:"prefix"`
	Hash      string     `json:"hash"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

func (k keyItem) apiKey() accounts.APIKey {
	return accounts.APIKey{ID: k.ID, AccountID: k.AccountID, ChannelID: k.ChannelID, Name: k.Name,
		Prefix: k.Prefix, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}

// keyHashItem is the lookup item of a live key, so authentication is one GetItem: it carries what
// authentication needs of the account too (issue 21), written in the same transaction as every change of
// the key or of the account's access. The key acts for its one channel, so the account's channel list is
// not carried (a new channel changes no key). AccessUntil is nil on items written before it was carried;
// authentication then reads the account, as it always did (see KeyByHash).
type keyHashItem struct {
	KeyID       string     `json:"keyId"`
	AccountID   string     `json:"accountId"`
	ChannelID   string     `json:"channelId"`
	Hash        string     `json:"hash"`
	AccessUntil *time.Time `json:"accessUntil,omitempty"`
}

// hashItem returns the lookup item of key k of an account open until accessUntil.
func (k keyItem) hashItem(accessUntil time.Time) (Item, error) {
	until := accessUntil.UTC()
	return encode(keyHashKey(k.Hash), keyHashItem{KeyID: k.ID, AccountID: k.AccountID, ChannelID: k.ChannelID,
		Hash: k.Hash, AccessUntil: &until})
}

// CreateAccount stores a new account; CONFLICT when the id is taken.
func (s *Store) CreateAccount(ctx context.Context, a accounts.Account) error {
	item, err := encode(accountKey(a.ID, skAccount), accountRecord(a))
	if err != nil {
		return err
	}
	err = s.write(ctx, Put(item, IfNotExists))
	if errors.Is(err, ErrConditionFailed) {
		return apperr.Conflictf("account %s exists already", a.ID)
	}
	return err
}

// getAccount returns the account and its version.
func (s *Store) getAccount(ctx context.Context, accountID string) (accounts.Account, int64, error) {
	var a accountRecord
	version, err := s.getJSON(ctx, accountKey(accountID, skAccount), &a)
	return accounts.Account(a), version, orNotFound(err, "account not found")
}

// putAccount rewrites an account's item if it is still at version, keeping the rate counters its sessions'
// leases add to it (LeaseAccount).
func putAccount(item Item, version int64) Op {
	op := PutIfVersion(item, version)
	op.KeepCounters = true
	return op
}

// Account returns what authentication needs of the account (auth.Directory).
func (s *Store) Account(ctx context.Context, accountID string) (auth.AccountRecord, error) {
	a, _, err := s.getAccount(ctx, accountID)
	if err != nil {
		return auth.AccountRecord{}, err
	}
	return authAccount(a), nil
}

// authAccount is what authentication needs of a.
func authAccount(a accounts.Account) auth.AccountRecord {
	return auth.AccountRecord{ID: a.ID, AccessUntil: a.AccessUntil, ChannelIDs: a.ChannelIDs}
}

// errReadAgain, returned by updateAccount's onExtraFailed, makes it read the account and try again.
var errReadAgain = errors.New("store: read again")

// updateAccount applies change to the stored account under optimistic locking, trying again when a
// concurrent write changed the account between the read and the write. extra ops join the transaction;
// the index of a failing extra op is passed to onExtraFailed.
func (s *Store) updateAccount(ctx context.Context, accountID string, change func(*accounts.Account) ([]Op, error),
	onExtraFailed func(i int) error) (accounts.Account, error) {
	for range versionRetries {
		a, version, err := s.getAccount(ctx, accountID)
		if err != nil {
			return accounts.Account{}, err
		}
		extra, err := change(&a)
		if err != nil {
			return accounts.Account{}, err
		}
		item, err := encode(accountKey(accountID, skAccount), accountRecord(a))
		if err != nil {
			return accounts.Account{}, err
		}
		err = s.write(ctx, append([]Op{putAccount(item, version)}, extra...)...)
		switch i := FailedOp(err); {
		case i == -1 && err != nil:
			return accounts.Account{}, err
		case i == -1:
			return a, nil
		case i > 0:
			if err := onExtraFailed(i - 1); !errors.Is(err, errReadAgain) {
				return accounts.Account{}, err
			}
		}
		// The account, or an item the change derived from it, changed since we read it; read it again.
	}
	return accounts.Account{}, apperr.Conflictf("account %s is being changed concurrently; try again", accountID)
}

// SetAccessUntil changes the account's access end.
func (s *Store) SetAccessUntil(ctx context.Context, accountID string, until time.Time) (accounts.Account, error) {
	return s.updateAccount(ctx, accountID, func(a *accounts.Account) ([]Op, error) {
		a.AccessUntil = until
		// Every live key's lookup item carries the access end: rewrite them in the same transaction (at most
		// MaxLiveKeysPerAccount, so well within a transaction). A key created meanwhile changed the account's
		// version (see CreateKey); one revoked meanwhile fails its IfExists: either way, read again.
		keys, err := s.liveKeys(ctx, accountID)
		if err != nil {
			return nil, err
		}
		ops := make([]Op, 0, len(keys))
		for _, k := range keys {
			it, err := k.hashItem(until)
			if err != nil {
				return nil, err
			}
			// Keeping the key's rate counters (ratelimit.go): an access change resets no window.
			ops = append(ops, PutKeepingCounters(it, IfExists))
		}
		return ops, nil
	}, func(int) error { return errReadAgain })
}

// liveKeys returns the account's unrevoked keys as stored.
func (s *Store) liveKeys(ctx context.Context, accountID string) ([]keyItem, error) {
	items, err := s.queryAll(ctx, accountPK(accountID), prefixKey, false)
	if err != nil {
		return nil, err
	}
	stored, err := decodeAll[keyItem](items)
	if err != nil {
		return nil, err
	}
	live := stored[:0]
	for _, k := range stored {
		if k.RevokedAt == nil {
			live = append(live, k)
		}
	}
	return live, nil
}

// CreateChannel stores the channel and adds it to its account's channel list, in one transaction guarded
// by the account's version, so the list (and its length limit) is exact under concurrent creations.
func (s *Store) CreateChannel(ctx context.Context, ch accounts.Channel, max int) error {
	item, err := encode(channelKey(ch.ID, skChannel), channelRecord(ch))
	if err != nil {
		return err
	}
	_, err = s.updateAccount(ctx, ch.AccountID, func(a *accounts.Account) ([]Op, error) {
		if len(a.ChannelIDs) >= max {
			return nil, apperr.Invalid("", "at most %d channels per account", max)
		}
		a.ChannelIDs = append(a.ChannelIDs, ch.ID)
		return []Op{Put(item, IfNotExists)}, nil
	}, func(int) error { return apperr.Conflictf("channel %s exists already", ch.ID) })
	return err
}

// GetChannel returns a channel's metadata.
func (s *Store) GetChannel(ctx context.Context, channelID string) (accounts.Channel, error) {
	var ch channelRecord
	_, err := s.getJSON(ctx, channelKey(channelID, skChannel), &ch)
	return accounts.Channel(ch), orNotFound(err, "channel not found")
}

// CreateKey counts the key as live (at most max), stores it and its hash lookup, which carries the
// account's access end, in one transaction, so concurrent creations can never leave more than max live
// keys. The transaction rewrites the account unchanged under its version: an access change racing it
// (SetAccessUntil, which rewrites every live key's lookup) then makes one of the two read again, so no
// lookup item ever carries a stale access end.
func (s *Store) CreateKey(ctx context.Context, k accounts.APIKey, hash string, max int) error {
	stored := keyItem{ID: k.ID, AccountID: k.AccountID, ChannelID: k.ChannelID, Name: k.Name, Prefix: k.Prefix,
		Hash: hash, CreatedAt: k.CreatedAt}
	keyIt, err := encode(apiKeyKey(k.AccountID, k.ID), stored)
	if err != nil {
		return err
	}
	_, err = s.updateAccount(ctx, k.AccountID, func(a *accounts.Account) ([]Op, error) {
		hashIt, err := stored.hashItem(a.AccessUntil)
		return []Op{Incr(liveKeysCounter(k.AccountID), 1, int64(max)), Put(keyIt, IfNotExists), Put(hashIt, IfNotExists)}, err
	}, func(i int) error {
		switch i {
		case 0:
			return apperr.Invalid("", "at most %d live keys per account", max)
		case 1:
			return apperr.Conflictf("key %s exists already", k.ID)
		default:
			return apperr.Conflictf("this key exists already")
		}
	})
	return err
}

// getKey returns the stored key and its version.
func (s *Store) getKey(ctx context.Context, accountID, keyID string) (keyItem, int64, error) {
	var k keyItem
	version, err := s.getJSON(ctx, apiKeyKey(accountID, keyID), &k)
	return k, version, orNotFound(err, "key not found")
}

// GetKey returns one key of the account, revoked or not.
func (s *Store) GetKey(ctx context.Context, accountID, keyID string) (accounts.APIKey, error) {
	k, _, err := s.getKey(ctx, accountID, keyID)
	return k.apiKey(), err
}

// AccountWithKey returns the account and, when keyID is not empty, that key of it (nil when there is no
// such key), in one read.
func (s *Store) AccountWithKey(ctx context.Context, accountID, keyID string) (accounts.Account, *accounts.APIKey, error) {
	keys := []Key{accountKey(accountID, skAccount)}
	if keyID != "" {
		keys = append(keys, apiKeyKey(accountID, keyID))
	}
	items, err := s.t.GetMany(ctx, keys)
	if err != nil {
		return accounts.Account{}, nil, err
	}
	var a accounts.Account
	var key *accounts.APIKey
	found := false
	for _, it := range items {
		switch it.SK {
		case skAccount:
			if err := decode(it, &a); err != nil {
				return accounts.Account{}, nil, err
			}
			found = true
		default:
			var k keyItem
			if err := decode(it, &k); err != nil {
				return accounts.Account{}, nil, err
			}
			ak := k.apiKey()
			key = &ak
		}
	}
	if !found {
		return accounts.Account{}, nil, apperr.NotFoundf("account not found")
	}
	return a, key, nil
}

// ListKeys returns every key of the account, revoked ones included, oldest first (ids are time-ordered).
func (s *Store) ListKeys(ctx context.Context, accountID string) ([]accounts.APIKey, error) {
	return queryEach(ctx, s, accountPK(accountID), prefixKey, false, keyItem.apiKey)
}

// RevokeKey marks the key revoked, deletes its hash lookup and gives its place back, in one transaction,
// and returns its hash. An unknown or already revoked key answers NOT_FOUND.
func (s *Store) RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) (string, error) {
	for range versionRetries {
		k, version, err := s.getKey(ctx, accountID, keyID)
		if err != nil {
			return "", err
		}
		if k.RevokedAt != nil {
			return "", apperr.NotFoundf("key not found")
		}
		k.RevokedAt = &at
		item, err := encode(apiKeyKey(accountID, keyID), k)
		if err != nil {
			return "", err
		}
		err = s.write(ctx,
			PutIfVersion(item, version),
			Delete(keyHashKey(k.Hash), Always),
			Incr(liveKeysCounter(accountID), -1, 0),
		)
		switch FailedOp(err) {
		case -1:
			if err != nil {
				return "", err
			}
			return k.Hash, nil
		case 0:
			continue // changed (most likely revoked) since we read it: read it again
		default:
			return "", fmt.Errorf("revoke key %s: live key counter of account %s is already 0: %w", keyID, accountID, err)
		}
	}
	return "", apperr.Conflictf("key %s is being changed concurrently; try again", keyID)
}

// KeyByHash returns the live key with this hash and, when its lookup item carries it, its account's access
// end (auth.Directory): one GetItem.
func (s *Store) KeyByHash(ctx context.Context, hash string) (auth.KeyRecord, error) {
	it, err := s.t.Get(ctx, keyHashKey(hash))
	if errors.Is(err, ErrNotFound) {
		return auth.KeyRecord{}, keyNotFound()
	}
	if err != nil {
		return auth.KeyRecord{}, err
	}
	return keyRecord(it)
}

func keyNotFound() error { return apperr.NotFoundf("key not found") }

// keyRecord decodes a key's lookup item.
func keyRecord(it Item) (auth.KeyRecord, error) {
	var h keyHashItem
	if err := decode(it, &h); err != nil {
		return auth.KeyRecord{}, err
	}
	rec := auth.KeyRecord{ID: h.KeyID, AccountID: h.AccountID, ChannelID: h.ChannelID, Hash: h.Hash}
	if h.AccessUntil != nil {
		rec.AccessUntil, rec.AccountCarried = *h.AccessUntil, true
	}
	return rec, nil
}

var (
	_ accounts.Repository = (*Store)(nil)
	_ auth.Directory      = (*Store)(nil)
)
