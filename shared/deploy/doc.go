// Package deploy has no code: its tests prove that template.yaml agrees with the OpenAPI contract
// (every operation routed once, by the function its tag names, public exactly where the document says),
// with the functions/ directories, and with the store (table keys, TTL, the IAM actions the adapter needs).
package deploy
