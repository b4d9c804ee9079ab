// Command admin manages accounts and keys from a terminal:
//
//	go run ./infra/admin create-key [--account ID] [--channel ID | --channel-name NAME] [--name KEYNAME]
//	                                [--access-until RFC3339|DATE] [--json]
//	go run ./infra/admin token --account ID [--ttl 12h]
//	go run ./infra/admin set-access --account ID --until RFC3339|DATE
//	go run ./infra/admin index-research
//
// It works on the local stack's embedded store (CSS_DATA_DIR/table) unless CSS_TABLE_NAME names a
// DynamoDB table (CSS_DYNAMODB_ENDPOINT for DynamoDB Local).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/store/pebble"
)

const usageText = `usage: go run ./infra/admin <command> [flags]

commands:
  create-key      create a key (and the account and a channel when needed); prints the key once
  token           mint a development session token for an account (development mode only)
  set-access      change when an account's access ends
  index-research  put every research state back in the scheduler's index, so expired research is swept
                  (decision 49); run once after deploying the build that sweeps (it scans the table)

Run a command with -h for its flags. DATE (YYYY-MM-DD) means through the end of that day, UTC.
`

func main() {
	cfg, err := config.FromEnv(config.Development)
	if err != nil {
		fmt.Fprintln(os.Stderr, "admin:", err)
		os.Exit(1)
	}
	os.Exit(run(context.Background(), cfg, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run executes one command and returns the exit status.
func run(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "create-key":
		err = createKey(ctx, cfg, rest, stdout, stderr)
	case "token":
		err = token(cfg, rest, stdout, stderr)
	case "set-access":
		err = setAccess(ctx, cfg, rest, stdout, stderr)
	case "index-research":
		err = indexResearch(ctx, cfg, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText)
		return 0
	default:
		err = usagef("unknown command %q", cmd)
	}
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "admin: %s\n\n%s", ue.msg, usageText)
		return 2
	default:
		fmt.Fprintln(stderr, "admin:", err)
		return 1
	}
}

// parseFlags parses args, refusing positional arguments; a flag error is a usage error (already printed).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

func createKey(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("create-key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	accountID := fs.String("account", "", "account id (default: a new account)")
	channelID := fs.String("channel", "", "an existing channel of the account")
	channelName := fs.String("channel-name", "main", "name of the channel created for the key when --channel is not given")
	keyName := fs.String("name", "", "key name")
	accessUntil := fs.String("access-until", "", "access end of a new account (default: one year ahead); given for an existing account, it is changed")
	asJSON := fs.Bool("json", false, "print {accountId, channelId, keyId, key} as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	flagSet := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { flagSet[f.Name] = true })
	if flagSet["channel"] && flagSet["channel-name"] {
		return usagef("create-key: --channel and --channel-name exclude each other")
	}
	if flagSet["channel"] && *accountID == "" {
		return usagef("create-key: --channel needs --account (a new account has no channels)")
	}
	until := time.Now().UTC().AddDate(1, 0, 0)
	if flagSet["access-until"] {
		var err error
		if until, err = parseUntil(*accessUntil); err != nil {
			return usagef("create-key: --access-until: %v", err)
		}
	}

	st, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	svc := accounts.NewService(st, time.Now)

	acct, err := svc.CreateAccount(ctx, *accountID, until)
	switch {
	case apperr.CodeOf(err) == apperr.Conflict:
		// An existing account: check the key fits before creating a channel it would not use.
		live, err := svc.ListKeys(ctx, *accountID)
		if err != nil {
			return err
		}
		if len(live) >= accounts.MaxLiveKeysPerAccount {
			return fmt.Errorf("account %s has %d live keys already (at most %d): revoke one first",
				*accountID, len(live), accounts.MaxLiveKeysPerAccount)
		}
		if flagSet["access-until"] {
			if _, err := svc.SetAccessUntil(ctx, *accountID, until); err != nil {
				return err
			}
		}
		acct.ID = *accountID
	case err != nil:
		return err
	}
	if *channelID == "" {
		ch, err := svc.CreateChannel(ctx, acct.ID, *channelName)
		if err != nil {
			return err
		}
		*channelID = ch.ID
	}
	k, err := svc.CreateKey(ctx, acct.ID, *channelID, *keyName)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{
			"accountId": acct.ID, "channelId": k.ChannelID, "keyId": k.ID, "key": k.Key,
		})
	}
	fmt.Fprintln(stdout, k.Key)
	fmt.Fprintf(stderr, "account %s\nchannel %s\nkey id  %s (the key above is shown only now)\n", acct.ID, k.ChannelID, k.ID)
	return nil
}

func token(cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	accountID := fs.String("account", "", "account id (the token's sub)")
	ttl := fs.Duration("ttl", 12*time.Hour, "how long the token is valid")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *accountID == "" {
		return usagef("token: --account is required")
	}
	if cfg.Mode != config.Development {
		return errors.New("token: development mode only; in production session tokens come from the account system")
	}
	// The store is not opened: tokens are minted while the local stack runs and holds it.
	secret := cfg.JWTSecret
	if secret == "" {
		var err error
		if secret, err = auth.LocalSecret(cfg.DataDir); err != nil {
			return err
		}
	}
	tok, err := auth.MintHS256(secret, *accountID, *ttl)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

func setAccess(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("set-access", flag.ContinueOnError)
	fs.SetOutput(stderr)
	accountID := fs.String("account", "", "account id")
	untilFlag := fs.String("until", "", "new access end, RFC3339 or DATE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *accountID == "" || *untilFlag == "" {
		return usagef("set-access: --account and --until are required")
	}
	until, err := parseUntil(*untilFlag)
	if err != nil {
		return usagef("set-access: --until: %v", err)
	}
	st, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	acct, err := accounts.NewService(st, time.Now).SetAccessUntil(ctx, *accountID, until)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "account %s: access until %s\n", acct.ID, acct.AccessUntil.Format(time.RFC3339))
	return nil
}

// indexResearch puts research states that left the scheduler's index back in it: a channel that had no
// keywords at its due time before decision 49 holds research nothing would sweep.
func indexResearch(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("index-research", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	n, err := st.IndexResearchStates(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d research states in the scheduler's index\n", n)
	return nil
}

// parseUntil reads an RFC 3339 time, or a date meaning through the end of that day (UTC).
func parseUntil(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a date (YYYY-MM-DD)", s)
	}
	return d.AddDate(0, 0, 1), nil
}

// dynamoClient talks to DynamoDB Local when CSS_DYNAMODB_ENDPOINT is set, and otherwise to AWS with the
// credentials an operator's shell has (environment, shared config and SSO profiles, ...).
func dynamoClient(ctx context.Context, cfg config.Config) (*dynamodb.Client, error) {
	if cfg.DynamoDBEndpoint != "" {
		return dynamo.NewClient(cfg.DynamoDBEndpoint, cfg.Region)
	}
	var opts []func(*awsconfig.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.Region))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(awsCfg), nil
}

// openStore opens the DynamoDB table when CSS_TABLE_NAME is set, the local stack's embedded store otherwise.
func openStore(ctx context.Context, cfg config.Config) (*store.Store, func(), error) {
	if cfg.TableName != "" {
		client, err := dynamoClient(ctx, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("dynamodb client: %w", err)
		}
		return store.New(dynamo.New(client, cfg.TableName)), func() {}, nil
	}
	dir := pebble.DirIn(cfg.DataDir)
	tbl, err := pebble.Open(dir)
	if errors.Is(err, pebble.ErrInUse) {
		return nil, nil, fmt.Errorf("the local store %s is in use by a running local stack: stop `make run` first", dir)
	}
	if err != nil {
		return nil, nil, err
	}
	return store.New(tbl), func() { tbl.Close() }, nil
}
