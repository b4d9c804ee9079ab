package connection

// Google's error codes on the callback (RFC 6749 section 4.1.2.1, and Google's admin_policy_enforced),
// each with what the owner's page says. The parameter is anyone's to write (a link carrying a state its
// sender started), so the page never shows its text: an unknown code gets a sentence of its own.
var callbackErrors = map[string]string{
	"access_denied": "Access was not granted, so no channel was connected. You can start again from the app at any time.",
	"server_error":  "Google could not complete the request just now, so no channel was connected. Try again from the app in a few minutes.",
	"temporarily_unavailable": "Google could not complete the request just now, so no channel was connected. " +
		"Try again from the app in a few minutes.",
	"admin_policy_enforced": "Your Google Workspace administrator does not allow this app, so no channel was connected. " +
		"Ask your administrator, or connect with another Google account.",
	"invalid_request":           refusedRequest("invalid_request"),
	"invalid_scope":             refusedRequest("invalid_scope"),
	"unauthorized_client":       refusedRequest("unauthorized_client"),
	"unsupported_response_type": refusedRequest("unsupported_response_type"),
}

func refusedRequest(code string) string {
	return "Google refused this service's request (" + code + "), so no channel was connected. " +
		"Start the connection again from the app; if this happens again, tell the service's support."
}

// callbackError is the page's sentence for Google's error code.
func callbackError(code string) string {
	if msg, ok := callbackErrors[code]; ok {
		return msg
	}
	return "Google did not complete the connection, so no channel was connected. Start the connection again from the app."
}
