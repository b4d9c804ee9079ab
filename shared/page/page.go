// Package page slices offset/limit pages out of lists the API reports with a total.
package page

// Of returns items[offset:offset+limit], clipped to the slice; never nil, so JSON shows [].
func Of[T any](items []T, limit, offset int) []T {
	if offset < 0 || offset >= len(items) || limit <= 0 {
		return []T{}
	}
	end := len(items)
	if limit < end-offset {
		end = offset + limit
	}
	return items[offset:end]
}
