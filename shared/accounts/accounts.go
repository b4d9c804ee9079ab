// Package accounts holds accounts, their channels and their API keys, and the rules of key management
// (decisions 1, 2, 4 and 5): keys are scoped to one channel of the account, shown once, stored as hashes,
// and an account has at most MaxLiveKeysPerAccount live keys and MaxChannelsPerAccount channels.
package accounts

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
)

const (
	// MaxChannelsPerAccount is how many channels an account may own (decision 2).
	MaxChannelsPerAccount = 10
	// MaxLiveKeysPerAccount is how many unrevoked keys an account may hold at once (decision 2).
	MaxLiveKeysPerAccount = 5
	// MaxNameLen bounds channel and key names, in characters.
	MaxNameLen = 100
	// maxAccountIDLen bounds account ids, which come from the account system (a JWT's sub).
	maxAccountIDLen = 128
	// devAccessYears is how long the local stack's development account is open.
	devAccessYears = 100
)

// Account is a customer of the service.
type Account struct {
	ID          string    `json:"id"`
	AccessUntil time.Time `json:"accessUntil"`
	ChannelIDs  []string  `json:"channelIds"`
	CreatedAt   time.Time `json:"createdAt"`
}

// Channel is one creator channel of an account.
type Channel struct {
	ID        string    `json:"id"`
	AccountID string    `json:"accountId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// APIKey is a key as clients see it (the ApiKey schema): never its plaintext nor its hash.
type APIKey struct {
	ID        string     `json:"id"`
	AccountID string     `json:"-"`
	ChannelID string     `json:"channelId"`
	Name      string     `json:"name,omitempty"`
	Prefix    string     `json:"prefix"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// CreatedKey is a new key with its plaintext, which is in this value only (the ApiKeyCreated schema).
type CreatedKey struct {
	APIKey
	Key string `json:"key"`
}

// Repository is the storage the service needs; *store.Store implements it. Failures a client can act on
// are *apperr.Error values: NOT_FOUND for a missing account, channel or live key, VALIDATION_ERROR when a
// limit is reached, CONFLICT when the item already exists.
type Repository interface {
	// NewID returns a new uuid for a channel or a key.
	NewID() string

	CreateAccount(ctx context.Context, a Account) error
	SetAccessUntil(ctx context.Context, accountID string, until time.Time) (Account, error)
	// CreateChannel adds the channel to its account, refusing when the account already has max channels.
	CreateChannel(ctx context.Context, ch Channel, max int) error
	GetChannel(ctx context.Context, channelID string) (Channel, error)
	// CreateKey stores the key and its hash and counts it as live, atomically, refusing when the account
	// already has max live keys.
	CreateKey(ctx context.Context, k APIKey, hash string, max int) error
	GetKey(ctx context.Context, accountID, keyID string) (APIKey, error)
	// AccountWithKey returns the account and, when keyID is not empty, that key of it (nil when absent).
	AccountWithKey(ctx context.Context, accountID, keyID string) (Account, *APIKey, error)
	// ListKeys returns every key of the account, revoked ones included, oldest first.
	ListKeys(ctx context.Context, accountID string) ([]APIKey, error)
	// RevokeKey marks the live key revoked at `at`, removes its hash lookup and uncounts it, atomically, and
	// returns its hash.
	RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) (hash string, err error)
	KeyByHash(ctx context.Context, hash string) (auth.KeyRecord, error)
}

// Service applies the rules of accounts, channels and keys.
type Service struct {
	repo Repository
	now  func() time.Time
}

// NewService returns a Service over repo with the clock now.
func NewService(repo Repository, now func() time.Time) *Service {
	return &Service{repo: repo, now: now}
}

// Credential returns what a credential acts as: its account and, for an API key (keyID not empty), the
// key. A key revoked since the credential was cached answers UNAUTHORIZED, as it will once the cache
// forgets it.
func (s *Service) Credential(ctx context.Context, accountID, keyID string) (Account, *APIKey, error) {
	a, k, err := s.repo.AccountWithKey(ctx, accountID, keyID)
	if err != nil {
		return Account{}, nil, err
	}
	if keyID != "" && (k == nil || k.RevokedAt != nil) {
		return Account{}, nil, apperr.New(apperr.Unauthorized, "invalid or revoked API key")
	}
	return a, k, nil
}

// timestamp is the service's clock as stored: UTC, to the millisecond (what JSON round-trips keep).
func (s *Service) timestamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// CreateAccount creates an account open until accessUntil; an empty accountID gets a new uuid.
func (s *Service) CreateAccount(ctx context.Context, accountID string, accessUntil time.Time) (Account, error) {
	if accountID == "" {
		accountID = s.repo.NewID()
	}
	if err := validAccountID(accountID); err != nil {
		return Account{}, err
	}
	if accessUntil.IsZero() {
		return Account{}, apperr.Invalid("accessUntil", "is required")
	}
	a := Account{ID: accountID, AccessUntil: accessUntil.UTC(), ChannelIDs: []string{}, CreatedAt: s.timestamp()}
	if err := s.repo.CreateAccount(ctx, a); err != nil {
		return Account{}, err
	}
	return a, nil
}

// SetAccessUntil changes when the account's access ends (decision 5).
func (s *Service) SetAccessUntil(ctx context.Context, accountID string, until time.Time) (Account, error) {
	if until.IsZero() {
		return Account{}, apperr.Invalid("accessUntil", "is required")
	}
	return s.repo.SetAccessUntil(ctx, accountID, until.UTC())
}

// CreateChannel adds a channel to the account (at most MaxChannelsPerAccount).
func (s *Service) CreateChannel(ctx context.Context, accountID, name string) (Channel, error) {
	name = strings.TrimSpace(name)
	if err := validName("name", name, true); err != nil {
		return Channel{}, err
	}
	ch := Channel{ID: s.repo.NewID(), AccountID: accountID, Name: name, CreatedAt: s.timestamp()}
	if err := s.repo.CreateChannel(ctx, ch, MaxChannelsPerAccount); err != nil {
		return Channel{}, err
	}
	return ch, nil
}

// CreateKey makes a new key for one of the account's channels. The plaintext is returned here only.
func (s *Service) CreateKey(ctx context.Context, accountID, channelID, name string) (CreatedKey, error) {
	name = strings.TrimSpace(name)
	if err := validName("name", name, false); err != nil {
		return CreatedKey{}, err
	}
	if err := s.ownChannel(ctx, accountID, channelID); err != nil {
		return CreatedKey{}, err
	}
	key := auth.NewKey()
	k := APIKey{
		ID: s.repo.NewID(), AccountID: accountID, ChannelID: channelID, Name: name,
		Prefix: auth.KeyPrefix(key), CreatedAt: s.timestamp(),
	}
	if err := s.repo.CreateKey(ctx, k, auth.HashKey(key), MaxLiveKeysPerAccount); err != nil {
		return CreatedKey{}, err
	}
	return CreatedKey{APIKey: k, Key: key}, nil
}

// ownChannel checks that channelID names a channel of the account.
func (s *Service) ownChannel(ctx context.Context, accountID, channelID string) error {
	if u, err := uuid.Parse(channelID); err != nil || u.String() != channelID {
		return apperr.Invalid("channelId", "must be a lowercase uuid")
	}
	ch, err := s.repo.GetChannel(ctx, channelID)
	if apperr.CodeOf(err) == apperr.NotFound || (err == nil && ch.AccountID != accountID) {
		// Another account's channel is answered like a missing one: ids of others are not confirmed.
		return apperr.NotFoundf("channel not found")
	}
	return err
}

// ListKeys returns the account's live keys, oldest first.
func (s *Service) ListKeys(ctx context.Context, accountID string) ([]APIKey, error) {
	all, err := s.repo.ListKeys(ctx, accountID)
	if err != nil {
		return nil, err
	}
	live := make([]APIKey, 0, len(all))
	for _, k := range all {
		if k.RevokedAt == nil {
			live = append(live, k)
		}
	}
	return live, nil
}

// RevokeKey revokes a live key of the account; an unknown or already revoked key answers NOT_FOUND.
func (s *Service) RevokeKey(ctx context.Context, accountID, keyID string) error {
	_, err := s.RevokeKeyHash(ctx, accountID, keyID)
	return err
}

// RevokeKeyHash is RevokeKey returning the revoked key's hash, for a caller that keeps a credential cache
// in the same process (the local stack passes it to the authenticator's Forget).
func (s *Service) RevokeKeyHash(ctx context.Context, accountID, keyID string) (string, error) {
	return s.repo.RevokeKey(ctx, accountID, keyID, s.timestamp())
}

// EnsureDevKey makes sure the exact key exists (the local stack's CSS_DEV_API_KEYS): each such key has a
// channel of its own in the development account, both created when missing. Calling it again with the
// same key changes nothing, so the local stack runs it at every start.
func (s *Service) EnsureDevKey(ctx context.Context, accountID, key string) (APIKey, error) {
	if !auth.ValidKeyFormat(key) {
		return APIKey{}, apperr.Invalid("CSS_DEV_API_KEYS", "each key must be %s followed by 32 lowercase hex characters", auth.KeyPrefixLiteral)
	}
	hash := auth.HashKey(key)
	rec, err := s.repo.KeyByHash(ctx, hash)
	switch {
	case err == nil && rec.AccountID != accountID:
		return APIKey{}, apperr.Conflictf("the development key %s… belongs to another account", auth.KeyPrefix(key))
	case err == nil:
		return s.repo.GetKey(ctx, accountID, rec.ID)
	case apperr.CodeOf(err) != apperr.NotFound:
		return APIKey{}, err
	}
	now := s.timestamp()
	_, err = s.CreateAccount(ctx, accountID, now.AddDate(devAccessYears, 0, 0))
	if err != nil && apperr.CodeOf(err) != apperr.Conflict {
		return APIKey{}, err
	}
	ch, err := s.CreateChannel(ctx, accountID, "Development channel "+auth.KeyPrefix(key))
	if err != nil {
		return APIKey{}, err
	}
	k := APIKey{
		ID: s.repo.NewID(), AccountID: accountID, ChannelID: ch.ID, Name: "development key",
		Prefix: auth.KeyPrefix(key), CreatedAt: now,
	}
	if err := s.repo.CreateKey(ctx, k, hash, MaxLiveKeysPerAccount); err != nil {
		return APIKey{}, err
	}
	return k, nil
}

// EnsureFirstKey gives the local stack a way in on its very first start: when the account does not exist
// yet, it is created with one channel and one key, which is returned (its plaintext shown that once);
// when the account exists, nothing happens and the result is nil.
func (s *Service) EnsureFirstKey(ctx context.Context, accountID string) (*CreatedKey, error) {
	_, err := s.CreateAccount(ctx, accountID, s.timestamp().AddDate(devAccessYears, 0, 0))
	switch {
	case apperr.CodeOf(err) == apperr.Conflict:
		return nil, nil
	case err != nil:
		return nil, err
	}
	ch, err := s.CreateChannel(ctx, accountID, "Development channel")
	if err != nil {
		return nil, err
	}
	k, err := s.CreateKey(ctx, accountID, ch.ID, "development key")
	if err != nil {
		return nil, err
	}
	return &k, nil
}

func validAccountID(id string) error {
	if len(id) > maxAccountIDLen {
		return apperr.Invalid("accountId", "must be at most %d characters", maxAccountIDLen)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return apperr.Invalid("accountId", "must not contain spaces or control characters")
		}
	}
	return nil
}

func validName(field, name string, required bool) error {
	switch n := utf8.RuneCountInString(name); {
	case n == 0 && required:
		return apperr.Invalid(field, "is required")
	case n > MaxNameLen:
		return apperr.Invalid(field, "must be at most %d characters", MaxNameLen)
	}
	return nil
}
