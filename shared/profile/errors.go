package profile

import "github.com/creatorstrategy/css/shared/apperr"

func isNotFound(err error) bool { return apperr.CodeOf(err) == apperr.NotFound }
