// Package deploy has no code: its tests prove that template.yaml agrees with the OpenAPI contract (every
// operation routed once, to the function its x-css-function names; no authorizer, since each function
// authenticates its own requests), with the functions/ directories, and with the store (table keys, TTL,
// the IAM actions each function's operations use), and that the operator's basics are there (alarms,
// route throttling, tracing, log retention).
package deploy
