package main

import (
	"crypto/rand"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestStacksOnDynamoDBLocalShareTheRateLimit: two local stacks on one DynamoDB Local table (the burst
// run's setup, make bench-burst, in small) serve two keys at once, limit 5 a minute: every answer is 200 or
// 429, and no key gets more than 5 200s in a window across both stacks, each leasing from the table.
func TestStacksOnDynamoDBLocalShareTheRateLimit(t *testing.T) {
	keys := []string{"sk-css-00000000000000000000000000000a01", "sk-css-00000000000000000000000000000a02"}
	env := map[string]string{
		"CSS_DYNAMODB_ENDPOINT": emulatortest.DynamoDB(t), "CSS_TABLE_NAME": "css-local-" + rand.Text(),
		"AWS_REGION": "us-east-1", "CSS_RATE_OTHER_PER_MIN": "5",
		"CSS_DEV_API_KEYS": keys[0] + "," + keys[1],
	}
	var bases []string
	for range 2 {
		env["CSS_DATA_DIR"] = t.TempDir()
		base, _, stop := start(t, env)
		t.Cleanup(func() { _ = stop() })
		bases = append(bases, base)
	}
	type window struct {
		key int
		end time.Time
	}
	var mu sync.Mutex
	ok := map[window]int{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", bases[i%2]+"/api/v1/notes", nil)
			req.Header.Set("Authorization", "Bearer "+keys[i/2%2])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			got := time.Now()
			reset, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Reset"))
			switch {
			case resp.StatusCode == http.StatusTooManyRequests:
			case resp.StatusCode != http.StatusOK || err != nil:
				t.Errorf("status %d, X-RateLimit-Reset %q", resp.StatusCode, resp.Header.Get("X-RateLimit-Reset"))
			default:
				mu.Lock()
				ok[window{i / 2 % 2, got.Add(time.Duration(reset) * time.Second).Truncate(time.Minute)}]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(ok) == 0 {
		t.Fatal("no request was served")
	}
	for w, n := range ok {
		if n > 5 {
			t.Errorf("key %d: %d answers 200 in the window ending %s; the limit is 5", w.key, n, w.end.Format(time.TimeOnly))
		}
	}
}
