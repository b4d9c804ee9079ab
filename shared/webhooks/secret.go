package webhooks

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SecretPrefix starts every signing secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// secretBytes is the length of a signing key (Standard Webhooks asks for 24 to 64 bytes).
const secretBytes = 32

// NewSecret returns a new signing key and its `whsec_` form, the one shown to the user.
func NewSecret() (key []byte, shown string) {
	key = make([]byte, secretBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return key, SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// Sign returns the Standard Webhooks signature header value for a delivery: "v1,<base64 HMAC-SHA256 of
// id.timestamp.body>" for each key, space-separated (two keys while a rotated secret is still honoured).
func Sign(keys [][]byte, id string, at time.Time, body []byte) string {
	prefix := id + "." + strconv.FormatInt(at.Unix(), 10) + "."
	sigs := make([]string, 0, len(keys))
	for _, k := range keys {
		h := hmac.New(sha256.New, k)
		h.Write([]byte(prefix))
		h.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(h.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

// Cipher seals signing secrets at rest. aad binds a sealed secret to its registration, so a sealed value
// copied to another registration does not open.
type Cipher interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// sealVersion is the first byte of a sealed value: AES-256-GCM, 12-byte nonce, then ciphertext and tag.
const sealVersion = 1

// KeyBytes is the length of the sealing key.
const KeyBytes = 32

// aesGCM is a Cipher with one AES-256-GCM key.
type aesGCM struct{ aead cipher.AEAD }

// NewAESGCM returns a Cipher sealing with key (KeyBytes long) under AES-256-GCM.
func NewAESGCM(key []byte) (Cipher, error) {
	if len(key) != KeyBytes {
		return nil, fmt.Errorf("webhooks: the sealing key must be %d bytes, not %d", KeyBytes, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return aesGCM{aead: aead}, nil
}

func (c aesGCM) Seal(_ context.Context, plaintext, aad []byte) ([]byte, error) {
	out := make([]byte, 1+c.aead.NonceSize(), 1+c.aead.NonceSize()+len(plaintext)+c.aead.Overhead())
	out[0] = sealVersion
	_, _ = rand.Read(out[1:])
	return c.aead.Seal(out, out[1:], plaintext, aad), nil
}

// ErrUnsealable: a sealed value that does not open with this key (another key, another registration, or
// tampered with).
var ErrUnsealable = errors.New("webhooks: sealed secret does not open")

func (c aesGCM) Open(_ context.Context, sealed, aad []byte) ([]byte, error) {
	n := c.aead.NonceSize()
	if len(sealed) < 1+n+c.aead.Overhead() || sealed[0] != sealVersion {
		return nil, ErrUnsealable
	}
	pt, err := c.aead.Open(nil, sealed[1:1+n], sealed[1+n:], aad)
	if err != nil {
		return nil, ErrUnsealable
	}
	return pt, nil
}

// DeriveKey turns a configured key string (a Secrets Manager secret, a key file) of at least 32
// characters into a sealing key: HMAC-SHA256 keyed with the string, over a fixed label.
func DeriveKey(material string) ([]byte, error) {
	material = strings.TrimSpace(material)
	if len(material) < 32 {
		return nil, fmt.Errorf("webhooks: the secret sealing key material must be at least 32 characters, not %d", len(material))
	}
	h := hmac.New(sha256.New, []byte(material))
	h.Write([]byte("css webhook secret sealing key v1"))
	return h.Sum(nil), nil
}

// LazyCipher is a Cipher whose key is loaded on first use (a Lambda fetches it from Secrets Manager only
// when a request needs it). A failed load is tried again on the next use.
type LazyCipher struct {
	load func(ctx context.Context) ([]byte, error)
	mu   sync.Mutex
	c    Cipher
}

// NewLazyCipher returns a Cipher whose AES-256-GCM key load returns.
func NewLazyCipher(load func(ctx context.Context) ([]byte, error)) *LazyCipher {
	return &LazyCipher{load: load}
}

func (l *LazyCipher) get(ctx context.Context) (Cipher, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		return l.c, nil
	}
	key, err := l.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("webhooks: load the secret sealing key: %w", err)
	}
	c, err := NewAESGCM(key)
	if err != nil {
		return nil, err
	}
	l.c = c
	return c, nil
}

func (l *LazyCipher) Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return c.Seal(ctx, plaintext, aad)
}

func (l *LazyCipher) Open(ctx context.Context, sealed, aad []byte) ([]byte, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, sealed, aad)
}
