package generation

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// What the compiled prompts (prompts_gen.go, written by internal/promptgen from prompts/*.tmpl) call:
// text/template's semantics for the values whose type only shows at run time (the request's inputs, the
// views), without text/template itself, whose method lookup by name would make the linker keep every
// exported method of every type that reaches an interface in each function that renders a prompt.
// TestCompiledPromptsMatchTemplates holds the compiled prompts to text/template's output.

// promptDuration is the templates' duration: seconds as M:SS.
func promptDuration(secs int) string { return fmt.Sprintf("%d:%02d", secs/60, secs%60) }

// promptPatternChars is the templates' patternChars.
func promptPatternChars() int { return MaxPatternChars }

// noPrompt is ExecuteTemplate's error for a name the set does not hold.
func noPrompt(name string) error {
	return fmt.Errorf("template: no template %q associated with template %q", name, "")
}

// promptErr is an execution error as text/template words it: where, then what.
func promptErr(prefix string, err error) error { return fmt.Errorf("%s%w", prefix, err) }

// promptTruth is text/template's truth of a value: not nil, not zero, not empty; structs are true.
func promptTruth(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() > 0
	case reflect.Bool:
		return rv.Bool()
	case reflect.Complex64, reflect.Complex128:
		return rv.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !rv.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	}
	return true // a struct
}

// printValue writes v as text/template prints a value (its printableValue): "<no value>" for nil,
// pointers followed, a value whose pointer formats itself through the pointer, else fmt's default
// format. The error, for a channel or a function, names v's type.
func printValue(w *strings.Builder, v any) error {
	if v == nil {
		w.WriteString("<no value>")
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		for (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && !rv.IsNil() {
			rv = rv.Elem()
		}
	}
	if t := rv.Type(); !t.Implements(errorType) && !t.Implements(stringerType) {
		if rv.CanAddr() && (reflect.PointerTo(t).Implements(errorType) || reflect.PointerTo(t).Implements(stringerType)) {
			rv = rv.Addr()
		} else if k := rv.Kind(); k == reflect.Chan || k == reflect.Func {
			return errors.New(t.String())
		}
	}
	fmt.Fprint(w, rv.Interface())
	return nil
}

var (
	errorType    = reflect.TypeFor[error]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// promptEq is text/template's eq: arg1 equals one of arg2; basic values of different kinds (but
// signed and unsigned integers) do not compare.
func promptEq(arg1 any, arg2 ...any) (bool, error) {
	v1 := reflect.ValueOf(arg1)
	if len(arg2) == 0 {
		return false, errors.New("missing argument for comparison")
	}
	k1 := basicKind(v1)
	for _, a := range arg2 {
		arg := reflect.ValueOf(a)
		k2 := basicKind(arg)
		truth := false
		if k1 != k2 {
			switch {
			case k1 == intKind && k2 == uintKind:
				truth = v1.Int() >= 0 && uint64(v1.Int()) == arg.Uint()
			case k1 == uintKind && k2 == intKind:
				truth = arg.Int() >= 0 && v1.Uint() == uint64(arg.Int())
			default:
				if v1.IsValid() && arg.IsValid() {
					return false, fmt.Errorf("incompatible types for comparison: %v and %v", v1.Type(), arg.Type())
				}
			}
		} else {
			switch k1 {
			case boolKind:
				truth = v1.Bool() == arg.Bool()
			case complexKind:
				truth = v1.Complex() == arg.Complex()
			case floatKind:
				truth = v1.Float() == arg.Float()
			case intKind:
				truth = v1.Int() == arg.Int()
			case stringKind:
				truth = v1.String() == arg.String()
			case uintKind:
				truth = v1.Uint() == arg.Uint()
			default:
				if !canCompare(v1, arg) {
					return false, fmt.Errorf("non-comparable types %s: %v, %s: %v", v1, v1.Type(), arg.Type(), arg)
				}
				if isNilValue(v1) || isNilValue(arg) {
					truth = isNilValue(arg) == isNilValue(v1)
				} else {
					if !arg.Type().Comparable() {
						return false, fmt.Errorf("non-comparable type %s: %v", arg, arg.Type())
					}
					truth = v1.Interface() == arg.Interface()
				}
			}
		}
		if truth {
			return true, nil
		}
	}
	return false, nil
}

type basic int

const (
	invalidKind basic = iota
	boolKind
	complexKind
	intKind
	floatKind
	stringKind
	uintKind
)

func basicKind(v reflect.Value) basic {
	switch v.Kind() {
	case reflect.Bool:
		return boolKind
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKind
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKind
	case reflect.Float32, reflect.Float64:
		return floatKind
	case reflect.Complex64, reflect.Complex128:
		return complexKind
	case reflect.String:
		return stringKind
	}
	return invalidKind
}

func isNilValue(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

func canCompare(v1, v2 reflect.Value) bool {
	k1, k2 := v1.Kind(), v2.Kind()
	return k1 == k2 || k1 == reflect.Invalid || k2 == reflect.Invalid
}
