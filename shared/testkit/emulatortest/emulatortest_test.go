package emulatortest

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// dynamoDBRequest posts one DynamoDB JSON-protocol call and returns the status and body.
func dynamoDBRequest(t *testing.T, endpoint, target, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+target)
	// DynamoDB Local wants a SigV4-shaped header but does not verify the signature.
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return resp.StatusCode, string(b)
}

func TestDynamoDBAnswers(t *testing.T) {
	t.Parallel()
	endpoint := DynamoDB(t)
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint %q is not on the loopback address", endpoint)
	}
	table := "emulatortest_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	status, body := dynamoDBRequest(t, endpoint, "CreateTable", `{"TableName":"`+table+`",
		"AttributeDefinitions":[{"AttributeName":"PK","AttributeType":"S"}],
		"KeySchema":[{"AttributeName":"PK","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}`)
	if status != http.StatusOK {
		t.Fatalf("CreateTable: %d %s", status, body)
	}
	status, body = dynamoDBRequest(t, endpoint, "ListTables", `{}`)
	if status != http.StatusOK || !strings.Contains(body, `"`+table+`"`) {
		t.Fatalf("ListTables: %d %s; want %s listed", status, body, table)
	}
	if again := DynamoDB(t); again != endpoint {
		t.Fatalf("second DynamoDB(t) = %q; want the same emulator %q", again, endpoint)
	}
}

func TestElasticMQAnswers(t *testing.T) {
	t.Parallel()
	endpoint := ElasticMQ(t)
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint %q is not on the loopback address", endpoint)
	}
	query := func(params url.Values) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, endpoint+"/?"+params.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return do(t, req)
	}
	status, body := query(url.Values{"Action": {"CreateQueue"}, "QueueName": {"emulatortest"}})
	if status != http.StatusOK {
		t.Fatalf("CreateQueue: %d %s", status, body)
	}
	// Queue URLs are built from the bound address, so clients can use them as they are.
	wantURL := endpoint + "/000000000000/emulatortest"
	status, body = query(url.Values{"Action": {"ListQueues"}})
	if status != http.StatusOK || !strings.Contains(body, "<QueueUrl>"+wantURL+"</QueueUrl>") {
		t.Fatalf("ListQueues: %d %s; want %s listed", status, body, wantURL)
	}
	if again := ElasticMQ(t); again != endpoint {
		t.Fatalf("second ElasticMQ(t) = %q; want the same emulator %q", again, endpoint)
	}
}

func TestEnvironmentNamesTheEndpoint(t *testing.T) {
	// The script does not exist: reaching it would fail the test.
	e := &emulator{name: "test", script: "no-such-emulator", env: "CSS_EMULATORTEST_ENDPOINT"}
	t.Setenv("CSS_EMULATORTEST_ENDPOINT", "http://127.0.0.1:1")
	if got := e.endpoint(t); got != "http://127.0.0.1:1" {
		t.Fatalf("endpoint = %q; want the one in the environment", got)
	}
}

func TestStartFailureCarriesTheScriptOutput(t *testing.T) {
	t.Run("missing script", func(t *testing.T) {
		e := &emulator{name: "test", script: "no-such-emulator"}
		_, err := e.start()
		if err == nil || !strings.Contains(err.Error(), "infra/emulators/no-such-emulator not found") {
			t.Fatalf("start = %v; want the missing script named", err)
		}
	})
	t.Run("script fails", func(t *testing.T) {
		// No emulator listens within 0 seconds: the script gives up and says why.
		t.Setenv("EMULATOR_START_TIMEOUT", "0")
		e := &emulator{name: "DynamoDB Local", script: "dynamodb-local"}
		_, err := e.start()
		if err == nil || !strings.Contains(err.Error(), "dynamodb: not listening after 0s") {
			t.Fatalf("start = %v; want the script's own explanation", err)
		}
	})
}

// TestScriptStop runs the DynamoDB Local script by hand: stop takes the emulator down, and so does the exit
// of the process named in EMULATOR_OWNER_PID.
func TestScriptStop(t *testing.T) {
	script, err := findScript("dynamodb-local")
	if err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, owner int) string {
		t.Helper()
		cmd := exec.Command(script, "start")
		cmd.Env = append(os.Environ(), "EMULATOR_OWNER_PID="+strconv.Itoa(owner))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s start: %v", script, err)
		}
		endpoint := strings.TrimSpace(string(out))
		t.Cleanup(func() { _ = exec.Command(script, "stop", endpoint).Run() })
		if status, body := dynamoDBRequest(t, endpoint, "ListTables", `{}`); status != http.StatusOK {
			t.Fatalf("ListTables at %s: %d %s", endpoint, status, body)
		}
		return endpoint
	}
	// owner starts a process that lives until the test kills it.
	owner := func(t *testing.T) *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sleep", "3600")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		return cmd
	}

	t.Run("stop ENDPOINT", func(t *testing.T) {
		t.Parallel()
		endpoint := start(t, owner(t).Process.Pid)
		port := strings.TrimPrefix(endpoint, "http://127.0.0.1:")
		pidFile := filepath.Join(filepath.Dir(script), ".cache", "dynamodb", "run", port+".pid")
		if _, err := os.Stat(pidFile); err != nil {
			t.Fatalf("pid file of a running emulator: %v", err)
		}
		if out, err := exec.Command(script, "stop", endpoint).CombinedOutput(); err != nil {
			t.Fatalf("stop: %v\n%s", err, out)
		}
		// stop returns once the process is gone.
		if conn, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			conn.Close()
			t.Fatalf("%s still accepts connections after stop", endpoint)
		}
		if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
			t.Fatalf("pid file after stop: %v; want it removed", err)
		}
	})
	t.Run("owner exits", func(t *testing.T) {
		t.Parallel()
		own := owner(t)
		endpoint := start(t, own.Process.Pid)
		if err := own.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = own.Wait()
		// The watcher polls every second; the bound only keeps a broken watcher from hanging the test.
		addr := strings.TrimPrefix(endpoint, "http://")
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				break
			}
			conn.Close()
			if time.Now().After(deadline) {
				t.Fatalf("%s still accepts connections a minute after its owner exited", endpoint)
			}
		}
	})
}
