package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/contract"
)

// screenshot is where TestDocsPageInChromium leaves what the browser showed.
const screenshot = "../../.build/docs-reference.png"

// TestDocsPageInChromium loads GET /api/v1/docs from the local stack in headless Chromium (Debian's
// package, installed by `make tools`, infra/tools/install-chromium) under the page's own
// Content-Security-Policy: Redoc renders every operation of the contract, the browser reports no console
// error, no exception and no refused load, and a screenshot is written to .build/docs-reference.png.
// Redoc has no "try it" console, so there is no call to make from the page.
func TestDocsPageInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("Chromium is not installed (%v): run `make tools` or infra/tools/install-chromium", err)
	}
	if !apidocs.New().HasRenderer() {
		t.Fatal("this build has no reference renderer: run `make tools` or infra/tools/install-redoc")
	}
	base, _, stop := start(t, map[string]string{"CSS_DATA_DIR": t.TempDir()})
	defer stop()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox, // CI containers run as root, where Chromium's sandbox cannot start
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	// Everything the page reports as an error: console.error, uncaught exceptions, and the browser's own
	// log entries (a load the Content-Security-Policy refused, a failed request).
	var mu sync.Mutex
	var problems []string
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	listener := func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				report("console.%s: %s", ev.Type, strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			report("exception: %s (%s:%d)", msg, d.URL, d.LineNumber)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				report("%s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		}
	}

	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithListener(listener))
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()

	// Redoc writes one section per operation, data-section-id "tag/<Tag>/operation/<operationId>".
	last := chromedp.CSS(`[data-section-id$="operation/getDocs"]`)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/api/v1/docs"), chromedp.WaitVisible(last)); err != nil {
		t.Fatalf("load the page: %v (problems so far: %q)", err, problems)
	}
	sections, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('[data-section-id]'), e => e.getAttribute('data-section-id'))`))
	if err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(screenshot), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(screenshot, png, 0o644); err != nil {
		t.Fatal(err)
	}

	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, s := range sections {
		if _, id, ok := strings.Cut(s, "/operation/"); ok {
			shown[id] = true
		}
	}
	for _, op := range c.Operations {
		if !shown[op.ID] {
			t.Errorf("the page does not show %s (%s %s)", op.ID, op.Method, op.Path)
		}
	}
	if len(shown) != len(c.Operations) {
		t.Errorf("the page shows %d operations, the contract has %d", len(shown), len(c.Operations))
	}

	// What the page shows is what the service serves: the same title, taken from openapi.json.
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct{ Title, Version string }
	}
	if err := json.Unmarshal(contract.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, doc.Info.Title) {
		t.Errorf("the page's heading is %q, want the document's title %q", title, doc.Info.Title)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("the browser reported %s", p)
	}
}
