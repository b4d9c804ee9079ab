package mcp_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/wire"
)

// The figures of the MCP issue, side by side on loopback through the same server: tools/list, a read tool
// (get_my_videos) and the REST operation it mirrors (GET /my-videos), on a channel with 20 videos.
// go test -run '^$' -bench . -benchtime 2000x ./shared/mcp
func BenchmarkMCP(b *testing.B) {
	e := newEnv(b, func(c *wire.APIConfig) { c.RequestsPerMinute = 1 << 30 })
	cs := e.connect(e.keyA)
	for i := range 20 {
		r := call(b, cs, "commit_video", map[string]any{"title": fmt.Sprintf("Video %d", i), "contentType": "Long", "formulaType": "how-to"})
		if r.raw.IsError {
			b.Fatal(r.text)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	do := func(b *testing.B, method, path, body string) int {
		req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s %s: %d", method, path, res.StatusCode)
		}
		if n < 1000 {
			b.Fatalf("%s %s: %d bytes, not the 20 videos", method, path, n)
		}
		return int(n)
	}
	run := func(name, method, path, body string) {
		b.Run(name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			var size int
			for b.Loop() {
				start := time.Now()
				size = do(b, method, path, body)
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(float64(percentile(lat, 50).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(size), "bytes")
		})
	}
	const getMyVideos = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_my_videos","arguments":{}}}`
	run("tools-list", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	run("get_my_videos", "POST", "/mcp", getMyVideos)
	run("rest-my-videos", "GET", "/api/v1/my-videos", "")
	// The figure: each iteration calls the tool and the REST operation one after the other, so both see
	// the same machine; mcp/rest is the ratio of their p50s.
	b.Run("side-by-side", func(b *testing.B) {
		mcpLat := make([]time.Duration, 0, b.N)
		restLat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			do(b, "POST", "/mcp", getMyVideos)
			mid := time.Now()
			do(b, "GET", "/api/v1/my-videos", "")
			mcpLat, restLat = append(mcpLat, mid.Sub(start)), append(restLat, time.Since(mid))
		}
		m, r := percentile(mcpLat, 50), percentile(restLat, 50)
		b.ReportMetric(float64(m.Microseconds())/1000, "mcp-p50-ms")
		b.ReportMetric(float64(r.Microseconds())/1000, "rest-p50-ms")
		b.ReportMetric(float64(m)/float64(r), "mcp/rest")
	})
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*p/100]
}

// BenchmarkNewServer is what building the server adds to the mcp function's cold start ("start": the
// tool handlers) and what the first request the SDK answers adds ("sdk-server": every tool, resource and
// prompt registered with the SDK).
func BenchmarkNewServer(b *testing.B) {
	e := newEnv(b)
	b.Run("start", func(b *testing.B) {
		for b.Loop() {
			if _, err := mcp.NewServer(e.config()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk-server", func(b *testing.B) {
		for b.Loop() {
			srv, err := mcp.NewServer(e.config())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := srv.SDK(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
