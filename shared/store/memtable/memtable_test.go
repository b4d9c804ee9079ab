package memtable_test

import (
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/memtable"
	"github.com/creatorstrategy/css/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Table { return memtable.New() })
}

func TestResearchConformance(t *testing.T) {
	storetest.RunResearch(t, func(_ *testing.T, now func() time.Time) store.Table { return memtable.New(memtable.WithClock(now)) })
}

func TestConnectionConformance(t *testing.T) {
	storetest.RunConnection(t, func(_ *testing.T, now func() time.Time) store.Table { return memtable.New(memtable.WithClock(now)) })
}

func TestItemSizeEdges(t *testing.T) { storetest.ItemSizeEdges(t, memtable.New()) }
