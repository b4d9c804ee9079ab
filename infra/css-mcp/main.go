// Command css-mcp is the local MCP package of decision 38: an assistant starts it as a stdio MCP server,
// and it forwards every message to the service's streamable HTTP endpoint with the creator's API key.
//
//	go install github.com/creatorstrategy/css/infra/css-mcp@latest
//
// It reads CSS_API_KEY (required) and CSS_MCP_URL (the endpoint, {app_url}/mcp). A build may stamp the
// deployed endpoint as the default with -ldflags "-X main.defaultURL=https://…/mcp"; without one, as with
// go install, CSS_MCP_URL is required: the deployed address (API Gateway's generated host) is known only
// once the stack is deployed.
//
// Exit status: 0 when the assistant closes standard input (or on SIGINT/SIGTERM), 1 when the server
// refuses the key or cannot be talked to, 2 on a usage or configuration error.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/infra/css-mcp/bridge"
	"github.com/creatorstrategy/css/shared/auth"
)

// version is the MCP interface's version, which the local package carries too (decision 28).
const version = "2.6.0"

// defaultURL is the endpoint used when CSS_MCP_URL is unset; empty unless stamped at build time.
var defaultURL string

const (
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, &mcp.StdioTransport{}, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, local mcp.Transport, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("css-mcp", flag.ContinueOnError)
	flags.SetOutput(stderr)
	showVersion := flags.Bool("version", false, "print the version and exit")
	flags.Usage = func() {
		fmt.Fprint(stderr, `Usage: css-mcp [-version]

css-mcp is started by an MCP client (a desktop assistant, a code editor) and speaks MCP on its standard
input and output, forwarding every message to the Creator Strategy Service.

Environment:
  CSS_API_KEY  your API key, sk-css- followed by 32 hex characters (required)
  CSS_MCP_URL  the service's MCP endpoint, {app_url}/mcp`)
		if defaultURL != "" {
			fmt.Fprintf(stderr, " (default %s)", defaultURL)
		}
		fmt.Fprintln(stderr)
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "css-mcp: unexpected argument %q (configuration comes from the environment)\n", flags.Arg(0))
		return exitUsage
	}
	if *showVersion {
		fmt.Fprintln(stdout, "css-mcp", version)
		return 0
	}

	cfg, err := configure(getenv, defaultURL)
	if err != nil {
		fmt.Fprintln(stderr, "css-mcp:", err)
		return exitUsage
	}
	cfg.Errors = stderr
	err = bridge.Run(ctx, local, cfg)
	if err == nil || (errors.Is(err, context.Canceled) && ctx.Err() != nil) {
		return 0
	}
	fmt.Fprintln(stderr, "css-mcp:", err)
	return exitFailure
}

// configure reads and checks the environment. Its errors never quote the key.
func configure(getenv func(string) string, defaultURL string) (bridge.Config, error) {
	key := getenv("CSS_API_KEY")
	if key == "" {
		return bridge.Config{}, fmt.Errorf(`CSS_API_KEY is not set: put your API key (%s followed by 32 hex characters) in the "env" block of your MCP client's configuration`, auth.KeyPrefixLiteral)
	}
	if !auth.ValidKeyFormat(key) {
		hint := ""
		if strings.TrimSpace(key) != key || strings.ContainsAny(key, " \t\r\n") {
			hint = ", with spaces or line breaks"
		}
		return bridge.Config{}, fmt.Errorf("CSS_API_KEY is malformed: an API key is %s followed by 32 lowercase hex characters (this value has %d characters%s)",
			auth.KeyPrefixLiteral, len(key), hint)
	}
	endpoint := cmp.Or(getenv("CSS_MCP_URL"), defaultURL)
	if endpoint == "" {
		return bridge.Config{}, errors.New("CSS_MCP_URL is not set: set it to the service's MCP endpoint, {app_url}/mcp " +
			"(the deployed stack's ApiUrl output followed by /mcp, or http://127.0.0.1:8080/mcp for make run)")
	}
	if err := checkEndpoint(endpoint); err != nil {
		return bridge.Config{}, err
	}
	return bridge.Config{Endpoint: endpoint, Key: key, UserAgent: "css-mcp/" + version}, nil
}

// checkEndpoint accepts an absolute http(s) URL with a host, and plain http only to this machine: the
// API key travels in a header, so anywhere else it must be https.
func checkEndpoint(endpoint string) error {
	const example = "e.g. https://api.example.com/mcp or http://127.0.0.1:8080/mcp"
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("CSS_MCP_URL must be an absolute http:// or https:// URL with a host, %s", example)
	}
	if u.User != nil {
		return errors.New("CSS_MCP_URL must not carry credentials: the API key comes from CSS_API_KEY")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return errors.New("CSS_MCP_URL must use https:// unless it points at this machine (localhost, 127.0.0.1, ::1): the API key would travel in clear")
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
