// Package store is the service's one table and every access pattern on it: each pattern is one method of
// Store, named after what it does (GetVideo, CommitIdea, ReserveQuota, …), over the Table port, so a
// question such as "which items does committing an idea write?" is answered in one place.
//
// Store keeps the product's rules about storage: keys (README.md's table design), a channel's items
// under its own partition (tenant isolation: every method takes the channel), limits enforced by counters
// in the same transaction as the write, optimistic versions, the outbox item of an event written with
// what it reports, and expiry times. The Table port is a small DynamoDB-shaped interface (items, keys,
// conditions, transactions, queries); its adapters are dynamo (the cloud, and tests on DynamoDB Local),
// pebble (the local stack's embedded file, or memory for unit tests), and storetest is the conformance
// suite both pass.
//
// Errors are apperr errors: NotFound for a missing item, Conflict for a lost condition or version.
package store
