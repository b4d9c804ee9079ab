package planning

import "encoding/json"

// Optional tells an absent JSON field (Set false) from an explicit null (Set true, Value nil).
type Optional[T any] struct {
	Set   bool
	Value *T
}

// UnmarshalJSON is only called when the field is present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Value = &v
	return nil
}

// MarshalJSON writes the value or null.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if o.Value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*o.Value)
}
