package awsenv

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The SHA-256 fingerprints Amazon Trust Services publishes (https://www.amazontrust.com/repository/), so an
// edit of the embedded file cannot slip in another root.
var amazonFingerprints = []string{
	"8ecde6884f3d87b1125ba31ac3fcb13d7016de7f57cc904fe1cb97c6ae98196e", // Amazon Root CA 1
	"1ba5b2aa8c65401a82960118f80bec4f62304d83cec4713a19c39c011ea46db4", // Amazon Root CA 2
	"18ce6cfe7bf14e60b2e347b8dfe868cb31d02ebb3ada271569f50343b46db3a4", // Amazon Root CA 3
	"e35d28419ed02025cfa69038cd623962458da5c695fbdea3c22b0bfb25897092", // Amazon Root CA 4
	"568d6905a2c88708a4b3025190edcfedb1974a606a13c6e5290fcb2ae63edab5", // Starfield Services Root CA G2
}

func TestAmazonRootsAreAmazonTrustServices(t *testing.T) {
	var got []string
	for rest := amazonRoots; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if !cert.IsCA || time.Now().After(cert.NotAfter) {
			t.Errorf("%s: a CA valid now expected (CA %v, until %s)", cert.Subject, cert.IsCA, cert.NotAfter)
		}
		sum := sha256.Sum256(cert.Raw)
		got = append(got, hex.EncodeToString(sum[:]))
	}
	if !slices.Equal(got, amazonFingerprints) {
		t.Fatalf("embedded roots %v, want exactly %v", got, amazonFingerprints)
	}
}

// TestHTTPClientTrustsOnlyAmazon: a server whose certificate chains to another CA is refused, unless that
// CA is named by the extra file (SSL_CERT_FILE), which the pool then adds to Amazon's roots.
func TestHTTPClientTrustsOnlyAmazon(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	get := func(extraFile string) error {
		pool, err := rootPool(extraFile)
		if err != nil {
			return err
		}
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.RootCAs = pool
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
		if err != nil {
			return err
		}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	var unknown x509.UnknownAuthorityError
	if err := get(""); !errors.As(err, &unknown) {
		t.Fatalf("Amazon's roots alone: %v, want an unknown authority", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := get(ca); err != nil {
		t.Fatalf("with the server's CA in the extra file: %v", err)
	}
	if _, err := rootPool(filepath.Join(t.TempDir(), "missing.pem")); err == nil {
		t.Error("a missing SSL_CERT_FILE: want an error, not a pool without it")
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := rootPool(empty); err == nil {
		t.Error("an SSL_CERT_FILE with no certificate: want an error")
	}
}

// TestConfigUsesTheAmazonPool: the clients built from Config get the client whose transport trusts the pool.
func TestConfigUsesTheAmazonPool(t *testing.T) {
	for _, endpoint := range []string{"", "http://127.0.0.1:1"} {
		cfg, err := Config(endpoint, "us-east-1")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.HTTPClient == nil {
			t.Fatalf("endpoint %q: no HTTP client: the SDK's default would load the system pool", endpoint)
		}
	}
	pool, err := roots()
	if err != nil {
		t.Fatal(err)
	}
	client, err := HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	if tr := client.GetTransport(); tr.TLSClientConfig == nil || !tr.TLSClientConfig.RootCAs.Equal(pool) {
		t.Fatal("the AWS HTTP client's transport does not trust the Amazon pool")
	}
}
