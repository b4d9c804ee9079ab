package memtable_test

import (
	"testing"

	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/memtable"
	"github.com/creatorstrategy/css/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Table { return memtable.New() })
}

func TestItemSizeEdges(t *testing.T) { storetest.ItemSizeEdges(t, memtable.New()) }
