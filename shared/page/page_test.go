package page

import (
	"reflect"
	"testing"
)

func TestOf(t *testing.T) {
	items := []int{1, 2, 3, 4, 5}
	for _, c := range []struct {
		limit, offset int
		want          []int
	}{
		{2, 0, []int{1, 2}},
		{2, 4, []int{5}},
		{2, 5, []int{}},
		{100, 0, items},
		{1, 99, []int{}},
		{0, 0, []int{}},
		{3, -1, []int{}},
		{int(^uint(0) >> 1), 1, []int{2, 3, 4, 5}},
	} {
		if got := Of(items, c.limit, c.offset); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Of(limit %d, offset %d) = %v, want %v", c.limit, c.offset, got, c.want)
		}
	}
	if Of[int](nil, 10, 0) == nil {
		t.Error("nil for an empty page: JSON would say null, not []")
	}
}
