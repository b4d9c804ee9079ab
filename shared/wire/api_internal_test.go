package wire

import "testing"

func TestServedByAWS(t *testing.T) {
	for url, want := range map[string]bool{
		"https://cognito-idp.us-east-1.amazonaws.com/us-east-1_abc/.well-known/jwks.json": true,
		"https://COGNITO-IDP.eu-west-1.AMAZONAWS.COM/pool/.well-known/jwks.json":          true,
		"https://example.auth0.com/.well-known/jwks.json":                                 false,
		"https://amazonaws.com.evil.example/jwks.json":                                    false,
		"https://evilamazonaws.com/jwks.json":                                             false,
		"http://cognito-idp.us-east-1.amazonaws.com/jwks.json":                            false,
		"": false,
	} {
		if got := servedByAWS(url); got != want {
			t.Errorf("servedByAWS(%q) = %v, want %v", url, got, want)
		}
	}
}
