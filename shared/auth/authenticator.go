package auth

import (
	"container/list"
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/creatorstrategy/css/shared/apperr"
)

// KeyRecord is what the directory holds for a live API key.
type KeyRecord struct {
	ID        string
	AccountID string
	ChannelID string
	Hash      string
}

// AccountRecord is what authentication needs of an account.
type AccountRecord struct {
	ID          string
	AccessUntil time.Time
	ChannelIDs  []string
}

// Directory looks credentials up; *store.Store implements it. Both methods answer a NOT_FOUND *apperr.Error
// when there is no such live key or account; any other error is a failure of the directory itself.
type Directory interface {
	KeyByHash(ctx context.Context, hash string) (KeyRecord, error)
	Account(ctx context.Context, accountID string) (AccountRecord, error)
}

// DefaultCacheSize bounds the authenticator's cache; the oldest entry goes first when it is full.
const DefaultCacheSize = 10_000

// Authenticator resolves Authorization headers to identities, caching results (and refusals) in memory
// for a short TTL so a warm caller makes no table call for a credential it has seen. A revoked key stops
// working at once where Forget is called (the local stack) and within the TTL everywhere else (decision 2).
// Safe for concurrent use.
type Authenticator struct {
	dir     Directory
	tokens  TokenVerifier
	ttl     time.Duration
	maxSize int
	now     func() time.Time

	mu    sync.Mutex
	byKey map[string]*list.Element // credential hash -> element of order holding a *cacheEntry
	order *list.List               // oldest first
	// forgets counts Forget calls, so a lookup that raced a revocation does not cache what it read.
	forgets uint64
}

type cacheEntry struct {
	credHash string
	id       Identity
	err      error
	expires  time.Time
}

// AuthOption configures an Authenticator.
type AuthOption func(*Authenticator)

// WithClock sets the clock used for cache expiry and access checks (tests).
func WithClock(now func() time.Time) AuthOption { return func(a *Authenticator) { a.now = now } }

// WithCacheSize bounds the cache to n entries.
func WithCacheSize(n int) AuthOption { return func(a *Authenticator) { a.maxSize = n } }

// NewAuthenticator returns an authenticator over dir and tokens that caches results for ttl
// (config.AuthCacheTTL).
func NewAuthenticator(dir Directory, tokens TokenVerifier, ttl time.Duration, opts ...AuthOption) *Authenticator {
	a := &Authenticator{
		dir: dir, tokens: tokens, ttl: ttl, maxSize: DefaultCacheSize, now: time.Now,
		byKey: make(map[string]*list.Element), order: list.New(),
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

// errJWKSUnavailable marks a token that could not be checked because the key set could not be fetched: a
// failure of ours, not a bad credential.
var errJWKSUnavailable = errors.New("jwks unavailable")

// Authenticate resolves the credential and applies the X-Channel-Id header (the local stack's middleware).
func (a *Authenticator) Authenticate(ctx context.Context, authorization, channelHeader string) (Principal, error) {
	id, err := a.Resolve(ctx, authorization)
	if err != nil {
		return Principal{}, err
	}
	return id.Principal(channelHeader, a.now())
}

// Resolve turns an Authorization header into the identity of its credential. A missing, malformed,
// unknown, revoked or expired credential answers 401 UNAUTHORIZED; the credential is never quoted.
func (a *Authenticator) Resolve(ctx context.Context, authorization string) (Identity, error) {
	cred, err := bearer(authorization)
	if err != nil {
		return Identity{}, err
	}
	// API keys are cached under their own hash, so Forget(keyHash) finds them.
	credHash := HashKey(cred)
	now := a.now()
	a.mu.Lock()
	if el, ok := a.byKey[credHash]; ok {
		e := el.Value.(*cacheEntry)
		if now.Before(e.expires) {
			a.mu.Unlock()
			return e.id, e.err
		}
		a.order.Remove(el)
		delete(a.byKey, credHash)
	}
	forgets := a.forgets
	a.mu.Unlock()

	id, expires, err := a.lookup(ctx, cred, credHash)
	if err != nil && apperr.CodeOf(err) != apperr.Unauthorized {
		return Identity{}, err // a failure of ours: try again next time
	}
	if ttlEnd := now.Add(a.ttl); expires.IsZero() || ttlEnd.Before(expires) {
		expires = ttlEnd
	}
	a.remember(&cacheEntry{credHash: credHash, id: id, err: err, expires: expires}, forgets)
	return id, err
}

// Forget drops the cached identity of the key with this hash, so a key revoked in this process answers
// 401 on its next use.
func (a *Authenticator) Forget(keyHash string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forgets++
	if el, ok := a.byKey[keyHash]; ok {
		a.order.Remove(el)
		delete(a.byKey, keyHash)
	}
}

func (a *Authenticator) remember(e *cacheEntry, forgets uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.forgets != forgets || a.maxSize <= 0 {
		return
	}
	if el, ok := a.byKey[e.credHash]; ok {
		a.order.Remove(el)
	}
	for a.order.Len() >= a.maxSize {
		oldest := a.order.Front()
		a.order.Remove(oldest)
		delete(a.byKey, oldest.Value.(*cacheEntry).credHash)
	}
	a.byKey[e.credHash] = a.order.PushBack(e)
}

// lookup resolves a credential without the cache. expires is set when the identity must not outlive a
// time of its own (a session token's exp).
func (a *Authenticator) lookup(ctx context.Context, cred, credHash string) (Identity, time.Time, error) {
	if strings.HasPrefix(cred, "sk-") {
		if !ValidKeyFormat(cred) {
			return Identity{}, time.Time{}, unauthorized("malformed API key: expected %s followed by 32 lowercase hex characters", KeyPrefixLiteral)
		}
		id, err := a.keyIdentity(ctx, credHash)
		return id, time.Time{}, err
	}
	if strings.Count(cred, ".") != 2 {
		return Identity{}, time.Time{}, unauthorized("the bearer credential is neither an API key (%s…) nor a session token", KeyPrefixLiteral)
	}
	if a.tokens == nil {
		return Identity{}, time.Time{}, unauthorized("session tokens are not accepted by this deployment")
	}
	sess, err := a.tokens.Verify(ctx, cred)
	switch {
	case errors.Is(err, errJWKSUnavailable):
		return Identity{}, time.Time{}, &apperr.Error{Code: apperr.Internal, Message: "session token could not be verified", Cause: err}
	case errors.Is(err, jwt.ErrTokenExpired):
		return Identity{}, time.Time{}, &apperr.Error{Code: apperr.Unauthorized, Message: "session token expired", Cause: err}
	case err != nil:
		return Identity{}, time.Time{}, &apperr.Error{Code: apperr.Unauthorized, Message: "invalid session token", Cause: err}
	}
	acct, err := a.dir.Account(ctx, sess.AccountID)
	if err != nil {
		return Identity{}, time.Time{}, notFoundAs401(err, "the session token's account does not exist")
	}
	return Identity{
		AccountID: acct.ID, Method: MethodSession, ChannelIDs: acct.ChannelIDs, AccessUntil: acct.AccessUntil,
	}, sess.ExpiresAt, nil
}

func (a *Authenticator) keyIdentity(ctx context.Context, hash string) (Identity, error) {
	const refused = "invalid or revoked API key"
	key, err := a.dir.KeyByHash(ctx, hash)
	if err != nil {
		return Identity{}, notFoundAs401(err, refused)
	}
	if !hashesEqual(key.Hash, hash) {
		return Identity{}, unauthorized(refused)
	}
	acct, err := a.dir.Account(ctx, key.AccountID)
	if err != nil {
		return Identity{}, notFoundAs401(err, refused)
	}
	return Identity{
		AccountID: acct.ID, Method: MethodAPIKey, KeyID: key.ID, KeyChannelID: key.ChannelID,
		ChannelIDs: acct.ChannelIDs, AccessUntil: acct.AccessUntil,
	}, nil
}

// bearer extracts the credential of an "Authorization: Bearer <credential>" header (scheme case-insensitive).
func bearer(header string) (string, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", unauthorized("missing credential: send Authorization: Bearer <API key or session token>")
	}
	scheme, cred, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", unauthorized("the Authorization header must use the Bearer scheme")
	}
	if cred = strings.TrimSpace(cred); cred == "" {
		return "", unauthorized("the Bearer credential is empty")
	}
	return cred, nil
}

func unauthorized(format string, args ...any) *apperr.Error {
	return apperr.New(apperr.Unauthorized, format, args...)
}

// notFoundAs401 turns the directory's NOT_FOUND into a refusal and passes its other failures on.
func notFoundAs401(err error, msg string) error {
	if apperr.CodeOf(err) == apperr.NotFound {
		return unauthorized("%s", msg)
	}
	return &apperr.Error{Code: apperr.Internal, Message: "credential lookup failed", Cause: err}
}
