package rest

// Implemented says whether the operation has a handler; the others answer 501 NOT_IMPLEMENTED until their
// issue lands.
func Implemented(operationID string) bool {
	_, ok := (&Server{}).handlers()[operationID]
	return ok
}
