// Command utility is the Lambda serving the Utility operations of the API (see the OpenAPI document's tags)
// and the generated pictures at /files/<key> (a redirect to a short-lived presigned GET of the images
// bucket).
package main

import (
	"github.com/creatorstrategy/css/shared/ai/s3images"
	"github.com/creatorstrategy/css/shared/lambdaapp"
)

func main() { lambdaapp.Run("utility", lambdaapp.WithFiles(s3images.FilesHandler)) }
