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

// KeyRecord is what the directory holds for a live API key. It carries what authentication needs of the
// key's account (AccountCarried), so authenticating a key is one read; a record written before the
// account was carried has AccountCarried false, and the account is read as well.
type KeyRecord struct {
	ID        string
	AccountID string
	ChannelID string
	Hash      string
	// AccessUntil is the account's access end, set when AccountCarried.
	AccessUntil    time.Time
	AccountCarried bool
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

// DefaultCacheSize bounds the authenticator's cache of identities; the oldest entry goes first when it is
// full.
const DefaultCacheSize = 10_000

// Refusals are cached apart from identities, fewer and shorter: a flood of made-up credentials then costs
// a lookup each but never pushes a real identity out of the cache, and a refused credential retried in a
// loop costs one lookup per DefaultRefusalTTL.
const (
	DefaultRefusalCacheSize = 1_000
	DefaultRefusalTTL       = 5 * time.Second
)

// Authenticator resolves Authorization headers to identities, caching results (and, apart, refusals) in
// memory for a short TTL so a warm caller makes no table call for a credential it has seen. A revoked key
// stops working at once where Forget is called (the local stack) and within the TTL everywhere else
// (decision 2). Safe for concurrent use.
type Authenticator struct {
	dir        Directory
	tokens     TokenVerifier
	ttl        time.Duration
	refusalTTL time.Duration
	now        func() time.Time
	// refused is called once per credential refused after a lookup (a metric; see WithRefusalMetric).
	refused func(context.Context)

	mu       sync.Mutex
	ids      *lru // credential hash -> identity
	refusals *lru // credential hash -> refusal
	// forgets counts Forget calls, so a lookup that raced a revocation does not cache what it read.
	forgets uint64
}

type cacheEntry struct {
	credHash string
	id       Identity
	err      error
	expires  time.Time
}

// lru is a bounded cache of entries, the least recently stored first out.
type lru struct {
	max   int
	byKey map[string]*list.Element // credential hash -> element of order holding a *cacheEntry
	order *list.List               // oldest first
}

func newLRU(max int) *lru {
	return &lru{max: max, byKey: map[string]*list.Element{}, order: list.New()}
}

// get returns the live entry for credHash, dropping it when it has expired at now.
func (c *lru) get(credHash string, now time.Time) (*cacheEntry, bool) {
	el, ok := c.byKey[credHash]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if now.Before(e.expires) {
		return e, true
	}
	c.remove(credHash)
	return nil, false
}

func (c *lru) put(e *cacheEntry) {
	if c.max <= 0 {
		return
	}
	c.remove(e.credHash)
	for c.order.Len() >= c.max {
		c.remove(c.order.Front().Value.(*cacheEntry).credHash)
	}
	c.byKey[e.credHash] = c.order.PushBack(e)
}

func (c *lru) remove(credHash string) {
	if el, ok := c.byKey[credHash]; ok {
		c.order.Remove(el)
		delete(c.byKey, credHash)
	}
}

// AuthOption configures an Authenticator.
type AuthOption func(*Authenticator)

// WithClock sets the clock used for cache expiry and access checks (tests).
func WithClock(now func() time.Time) AuthOption { return func(a *Authenticator) { a.now = now } }

// WithCacheSize bounds the cache of identities to n entries (n <= 0: no cache).
func WithCacheSize(n int) AuthOption { return func(a *Authenticator) { a.ids.max = n } }

// WithRefusalCache bounds the cache of refusals to n entries (n <= 0: none) kept for ttl (at most the
// authenticator's TTL).
func WithRefusalCache(n int, ttl time.Duration) AuthOption {
	return func(a *Authenticator) { a.refusals.max, a.refusalTTL = n, ttl }
}

// WithRefusalMetric calls count once for each credential refused that was not in the cache (each costs a
// table read or a token verification, or is malformed); refusals answered from the cache are not counted
// again. The Lambdas turn it into the CloudWatch metric CredentialRefusals.
func WithRefusalMetric(count func(context.Context)) AuthOption {
	return func(a *Authenticator) { a.refused = count }
}

// NewAuthenticator returns an authenticator over dir and tokens that caches identities for ttl
// (config.AuthCacheTTL) and refusals for DefaultRefusalTTL.
func NewAuthenticator(dir Directory, tokens TokenVerifier, ttl time.Duration, opts ...AuthOption) *Authenticator {
	a := &Authenticator{
		dir: dir, tokens: tokens, ttl: ttl, refusalTTL: DefaultRefusalTTL, now: time.Now,
		refused: func(context.Context) {},
		ids:     newLRU(DefaultCacheSize), refusals: newLRU(DefaultRefusalCacheSize),
	}
	for _, o := range opts {
		o(a)
	}
	a.refusalTTL = min(a.refusalTTL, a.ttl)
	return a
}

// errJWKSUnavailable marks a token that could not be checked because the key set was never fetched: a
// failure of ours, not a bad credential (500, and tried again on the next request).
var errJWKSUnavailable = errors.New("jwks unavailable")

// errJWKSStale marks a token refused because the key set has not been refreshed for longer than the max
// stale time: the verifier fails closed (401), and logs JWKSStaleEvent for the operator.
var errJWKSStale = errors.New("jwks stale")

// Authenticate resolves the credential and applies the X-Channel-Id header (the local stack's middleware).
func (a *Authenticator) Authenticate(ctx context.Context, authorization, channelHeader string) (Principal, error) {
	return a.AuthenticateRead(ctx, authorization, channelHeader, nil)
}

// KeyRead is an API key's lookup made by the caller in a table call of its own (the key's read and its
// rate lease, in one): what Directory.KeyByHash would have answered for Hash.
type KeyRead struct {
	Hash   string
	Record KeyRecord
	// Err is nil or the directory's NOT_FOUND (no live key with this hash).
	Err error
}

// KeyRevoked is the refusal of a key whose lookup item is gone: a rate lease that finds no key item
// answers it, so a revoked key is refused at its instance's next lease even while its identity is cached.
func KeyRevoked() error { return unauthorized(refusedKey) }

const refusedKey = "invalid or revoked API key"

// AccountGone is the refusal of a session whose account's item is gone: a rate lease that finds no
// account answers it, as a key's does (KeyRevoked).
func AccountGone() error { return unauthorized(refusedAccount) }

const refusedAccount = "the session token's account does not exist"

// UncachedKey returns the hash of authorization's API key when it is a well-formed key whose identity and
// refusal are not cached, so authenticating it reads the key: the caller may read it with another call
// (KeyRead, AuthenticateRead). Anything else (no key, a malformed one, a session token, a cached
// credential) answers false.
func (a *Authenticator) UncachedKey(authorization string) (string, bool) {
	cred, err := bearer(authorization)
	if err != nil || !strings.HasPrefix(cred, "sk-") || !ValidKeyFormat(cred) {
		return "", false
	}
	credHash := HashKey(cred)
	if a.cached(credHash) {
		return "", false
	}
	return credHash, true
}

// AuthenticateRead is Authenticate with the key's lookup already made by the caller (read; nil, or for
// another hash: the directory is asked as usual). The cache is used and filled as always.
func (a *Authenticator) AuthenticateRead(ctx context.Context, authorization, channelHeader string, read *KeyRead) (Principal, error) {
	return a.authenticate(ctx, authorization, channelHeader, reads{key: read})
}

// AccountReader reads a session's account in the caller's own table call (the account's read and its
// rate lease, in one), answering what Directory.Account would.
type AccountReader func(ctx context.Context, accountID string) (AccountRecord, error)

// SessionToken reports whether authorization carries a session token (by its shape; this deployment
// accepts them), which AuthenticateSession may verify and whose account it may read through the caller's
// reader. It reads nothing and hashes nothing: the cache is AuthenticateSession's.
func (a *Authenticator) SessionToken(authorization string) bool {
	cred, err := bearer(authorization)
	return err == nil && a.tokens != nil && !strings.HasPrefix(cred, "sk-") && strings.Count(cred, ".") == 2
}

// AuthenticateSession is Authenticate with a session token's account read by readAccount once the token
// is verified: a cached identity or refusal, and a token that does not verify, never call it (nor does an
// API key, which is read from the directory as usual). The cache is used and filled as always.
func (a *Authenticator) AuthenticateSession(ctx context.Context, authorization, channelHeader string, readAccount AccountReader) (Principal, error) {
	return a.authenticate(ctx, authorization, channelHeader, reads{account: readAccount})
}

// reads are the lookups a caller made, or makes, in table calls of its own; the directory answers the rest.
type reads struct {
	key     *KeyRead
	account AccountReader
}

func (a *Authenticator) authenticate(ctx context.Context, authorization, channelHeader string, r reads) (Principal, error) {
	id, err := a.resolve(ctx, authorization, r)
	if err != nil {
		return Principal{}, err
	}
	return id.Principal(channelHeader, a.now())
}

// cached reports whether an identity or a refusal of the credential with this hash is cached.
func (a *Authenticator) cached(credHash string) bool {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.ids.get(credHash, now); ok {
		return true
	}
	_, ok := a.refusals.get(credHash, now)
	return ok
}

// Resolve turns an Authorization header into the identity of its credential. A missing, malformed,
// unknown, revoked or expired credential answers 401 UNAUTHORIZED; the credential is never quoted.
func (a *Authenticator) Resolve(ctx context.Context, authorization string) (Identity, error) {
	return a.resolve(ctx, authorization, reads{})
}

func (a *Authenticator) resolve(ctx context.Context, authorization string, r reads) (Identity, error) {
	cred, err := bearer(authorization)
	if err != nil {
		return Identity{}, err
	}
	// API keys are cached under their own hash, so Forget(keyHash) finds them.
	credHash := HashKey(cred)
	return a.cachedOr(ctx, credHash, func() (Identity, time.Time, error) { return a.lookup(ctx, cred, credHash, r) })
}

// ResolveKeyHash resolves the API key with this hash as Resolve resolves the key itself, from the same
// cache entry: for a credential that acts as a key (an MCP grant's access token, decision 55), so it ends
// with the key and shares its identity.
func (a *Authenticator) ResolveKeyHash(ctx context.Context, hash string) (Identity, error) {
	return a.cachedOr(ctx, hash, func() (Identity, time.Time, error) {
		id, err := a.keyIdentity(ctx, hash, nil)
		return id, time.Time{}, err
	})
}

// cachedOr answers the cached identity or refusal of credHash, else lookup's, caching it.
func (a *Authenticator) cachedOr(ctx context.Context, credHash string, lookup func() (Identity, time.Time, error)) (Identity, error) {
	now := a.now()
	a.mu.Lock()
	if e, ok := a.ids.get(credHash, now); ok {
		a.mu.Unlock()
		return e.id, nil
	}
	if e, ok := a.refusals.get(credHash, now); ok {
		a.mu.Unlock()
		return Identity{}, e.err
	}
	forgets := a.forgets
	a.mu.Unlock()

	id, expires, err := lookup()
	if err != nil {
		if apperr.CodeOf(err) != apperr.Unauthorized {
			return Identity{}, err // a failure of ours: try again next time
		}
		a.refused(ctx)
		a.mu.Lock()
		a.refusals.put(&cacheEntry{credHash: credHash, err: err, expires: now.Add(a.refusalTTL)})
		a.mu.Unlock()
		return Identity{}, err
	}
	if ttlEnd := now.Add(a.ttl); expires.IsZero() || ttlEnd.Before(expires) {
		expires = ttlEnd
	}
	a.mu.Lock()
	if a.forgets == forgets {
		a.ids.put(&cacheEntry{credHash: credHash, id: id, expires: expires})
	}
	a.mu.Unlock()
	return id, nil
}

// Forget drops the cached identity of the key with this hash, so a key revoked in this process answers
// 401 on its next use.
func (a *Authenticator) Forget(keyHash string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forgets++
	a.ids.remove(keyHash)
}

// lookup resolves a credential without the cache. expires is set when the identity must not outlive a
// time of its own (a session token's exp).
func (a *Authenticator) lookup(ctx context.Context, cred, credHash string, r reads) (Identity, time.Time, error) {
	if strings.HasPrefix(cred, "sk-") {
		if !ValidKeyFormat(cred) {
			return Identity{}, time.Time{}, unauthorized("malformed API key: expected %s followed by 32 lowercase hex characters", KeyPrefixLiteral)
		}
		id, err := a.keyIdentity(ctx, credHash, r.key)
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
	case errors.Is(err, errJWKSStale):
		return Identity{}, time.Time{}, &apperr.Error{Code: apperr.Unauthorized, Message: "session token could not be verified: the account system's signing keys are out of date", Cause: err}
	case errors.Is(err, jwt.ErrTokenExpired):
		return Identity{}, time.Time{}, &apperr.Error{Code: apperr.Unauthorized, Message: "session token expired", Cause: err}
	case err != nil:
		return Identity{}, time.Time{}, &apperr.Error{Code: apperr.Unauthorized, Message: "invalid session token", Cause: err}
	}
	readAccount := a.dir.Account
	if r.account != nil {
		readAccount = r.account
	}
	acct, err := readAccount(ctx, sess.AccountID)
	if err != nil {
		return Identity{}, time.Time{}, notFoundAs401(err, refusedAccount)
	}
	return Identity{
		AccountID: acct.ID, Method: MethodSession, ChannelIDs: acct.ChannelIDs, AccessUntil: acct.AccessUntil,
	}, sess.ExpiresAt, nil
}

func (a *Authenticator) keyIdentity(ctx context.Context, hash string, read *KeyRead) (Identity, error) {
	const refused = refusedKey
	var key KeyRecord
	var err error
	if read != nil && read.Hash == hash {
		key, err = read.Record, read.Err
	} else {
		key, err = a.dir.KeyByHash(ctx, hash)
	}
	if err != nil {
		return Identity{}, notFoundAs401(err, refused)
	}
	if !hashesEqual(key.Hash, hash) {
		return Identity{}, unauthorized(refused)
	}
	if key.AccountCarried {
		// The key acts for its own channel only (Identity.Principal), so its channel is all it needs.
		return Identity{
			AccountID: key.AccountID, Method: MethodAPIKey, KeyID: key.ID, KeyHash: hash, KeyChannelID: key.ChannelID,
			ChannelIDs: []string{key.ChannelID}, AccessUntil: key.AccessUntil,
		}, nil
	}
	acct, err := a.dir.Account(ctx, key.AccountID)
	if err != nil {
		return Identity{}, notFoundAs401(err, refused)
	}
	return Identity{
		AccountID: acct.ID, Method: MethodAPIKey, KeyID: key.ID, KeyHash: hash, KeyChannelID: key.ChannelID,
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
