// Command webhooks is the Lambda serving the Webhooks operations of the API (see the OpenAPI document's tags).
package main

import (
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/lambdaapp"
)

// Registration seals each new signing secret: only this function reads the sealing key.
func main() { lambdaapp.Run("webhooks", lambdaapp.WithSecretCipher(sealkey.Cipher)) }
