// Package auth turns a bearer credential (an API key or a session token) into the identity it stands for,
// and that identity plus the X-Channel-Id header into the principal a request acts as (decisions 1-5).
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

const (
	// KeyPrefixLiteral starts every API key: "sk-" plus the service's short identifier (decision 1).
	KeyPrefixLiteral = "sk-css-"
	keyHexLen        = 32
	// KeyLen is the length of a whole API key.
	KeyLen = len(KeyPrefixLiteral) + keyHexLen
	// displayPrefixLen is how much of a key is kept for display: "sk-css-" and 4 hex characters.
	displayPrefixLen = len(KeyPrefixLiteral) + 4
)

// NewKey returns a fresh API key: "sk-css-" and 32 lowercase hex characters (128 random bits).
func NewKey() string {
	b := make([]byte, keyHexLen/2)
	// crypto/rand.Read never returns an error (it panics if the system's source fails).
	_, _ = rand.Read(b)
	return KeyPrefixLiteral + hex.EncodeToString(b)
}

// ValidKeyFormat reports whether s has the shape of an API key.
func ValidKeyFormat(s string) bool {
	if len(s) != KeyLen || !strings.HasPrefix(s, KeyPrefixLiteral) {
		return false
	}
	for _, c := range s[len(KeyPrefixLiteral):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// HashKey is what is stored instead of a key: its SHA-256, hex-encoded. A key has 128 random bits, so a
// fast unsalted hash is enough; nothing short of the key itself finds it.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// KeyPrefix is the part of a key shown in listings ("sk-css-1a2b"), so users can tell their keys apart.
func KeyPrefix(key string) string {
	return key[:min(len(key), displayPrefixLen)]
}

// hashesEqual compares two hashes in constant time (decision 1: comparison never leaks timing).
func hashesEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
