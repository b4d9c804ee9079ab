// Package deploy has no code: its tests prove that template.yaml agrees with the OpenAPI contract (every
// operation routed once, to the function its x-css-function names; no authorizer, since each function
// authenticates its own requests), with the functions/ directories, and with the store (table keys, TTL;
// each function granted exactly the table actions its operations call, recorded by running them against
// DynamoDB Local), and that the operator's basics are there (alarms, route throttling, tracing, log
// retention).
package deploy
