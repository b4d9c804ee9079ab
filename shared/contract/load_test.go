package contract

import (
	"sync"
	"testing"
)

// TestLoadReturnsOneContract: every Load returns the same contract, decoded once, concurrently too.
func TestLoadReturnsOneContract(t *testing.T) {
	first, _ := Load()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c, err := Load()
			if err != nil || c != first {
				t.Errorf("Load = %p, %v; want %p", c, err, first)
			}
			// Concurrent first uses compile each validator once (run with -race).
			if _, err := c.Operation("createNote").ValidateBody([]byte(`{"category":"insight","content":"x"}`)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// TestLoadDocumentIsItsOwn: LoadDocument decodes anew each call, so its Contracts share nothing.
func TestLoadDocumentIsItsOwn(t *testing.T) {
	a, err := LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.Operations[0] == b.Operations[0] {
		t.Error("two LoadDocument calls share operations")
	}
	if a.Operation("createNote") == nil || a.Operation("createNote") == b.Operation("createNote") {
		t.Error("LoadDocument's lookup is not its own")
	}
}
