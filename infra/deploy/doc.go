// Package deploy holds what keeps template.yaml true to the rest of the repository. internal/routesgen
// writes its routes: each operation of the contract, on the function its x-css-function names
// (`go generate ./infra/deploy`). The tests check the rest. Against the OpenAPI contract: every operation
// routed once, to its function; no authorizer, since each function authenticates its own requests. Against
// functions/: one template function per folder, its logical id following the folder's name. Against the
// store and the code: table keys and TTL; each function granted exactly the table actions its operations
// and queue work call, recorded by running them against DynamoDB Local (grants_*_test.go, which build the
// functions as their mains do); the queues as shared/queue's Specs declare them; the models, the images
// bucket. And the operator's basics: alarms, route throttling, tracing, log retention.
package deploy

//go:generate go run ./internal/routesgen -template ../../template.yaml
