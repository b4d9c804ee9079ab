package awsenv

import (
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// amazonRoots are the roots of Amazon Trust Services (Amazon Root CA 1 to 4 and the Starfield Services
// Root G2 that cross-signs them), the only CAs AWS service endpoints chain to. Trusting them alone is
// stricter than the system pool, and far cheaper at a cold start: Go's first TLS connection otherwise loads
// the system pool, every certificate of the bundle and the certificate folders (about 20-30 ms on the
// development machine; infra/bench/README.md), which a Lambda pays on its first AWS call.
//
//go:embed amazon-roots.pem
var amazonRoots []byte

// roots is the pool every AWS client of the service trusts, built once per process.
var roots = sync.OnceValues(func() (*x509.CertPool, error) { return rootPool(os.Getenv("SSL_CERT_FILE")) })

// rootPool is Amazon's roots plus the certificates of extraFile, when named: the way to trust another CA
// for an endpoint override (an emulator or a proxy behind TLS), as SSL_CERT_FILE does for Go's system pool.
func rootPool(extraFile string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(amazonRoots) {
		return nil, errors.New("awsenv: the embedded Amazon roots do not parse")
	}
	if extraFile != "" {
		extra, err := os.ReadFile(extraFile)
		if err != nil {
			return nil, fmt.Errorf("awsenv: SSL_CERT_FILE: %w", err)
		}
		if !pool.AppendCertsFromPEM(extra) {
			return nil, fmt.Errorf("awsenv: SSL_CERT_FILE %s holds no PEM certificate", extraFile)
		}
	}
	return pool, nil
}

// RootCAs is the pool HTTPClient trusts: Amazon's roots and SSL_CERT_FILE's certificates, built once.
func RootCAs() (*x509.CertPool, error) { return roots() }

// HTTPClient is the HTTP client of every AWS SDK client of the service: the SDK's default, trusting only
// the roots above (and SSL_CERT_FILE's).
func HTTPClient() (*awshttp.BuildableClient, error) {
	pool, err := roots()
	if err != nil {
		return nil, err
	}
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		if tr.TLSClientConfig == nil {
			tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		tr.TLSClientConfig.RootCAs = pool
	}), nil
}
