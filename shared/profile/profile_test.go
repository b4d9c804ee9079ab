package profile_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

func TestGetDefaultsAndPutReplaces(t *testing.T) {
	ctx := context.Background()
	s := profile.NewService(store.New(memstore.New(t)))
	got, err := s.Get(ctx, "ch")
	if err != nil || !reflect.DeepEqual(got, profile.NicheProfile{ContentLanguage: profile.DefaultLanguage}) {
		t.Fatalf("Get before any Put = %+v, %v; want an empty profile in %s", got, err, profile.DefaultLanguage)
	}
	full := profile.NicheProfile{
		BroadNiche: "cooking", FocusedNiche: "vegan meal prep", Keywords: []string{"vegan", "meal prep", "budget", "protein"},
		TopCompetitors: []string{"a", "b"}, ContentLanguage: "german",
	}
	put, err := s.Put(ctx, "ch", contract.NicheProfile{
		BroadNiche: contract.Ptr("cooking"), FocusedNiche: contract.Ptr("vegan meal prep"),
		Keywords: []string{"vegan", "meal prep", "budget", "protein"}, TopCompetitors: []string{"a", "b"},
		ContentLanguage: contract.Ptr(contract.NicheProfileContentLanguageGerman),
	})
	if err != nil || !reflect.DeepEqual(put, full) {
		t.Fatalf("Put = %+v, %v", put, err)
	}
	if got, _ := s.Get(ctx, "ch"); !reflect.DeepEqual(got, full) {
		t.Fatalf("Get = %+v; want %+v", got, full)
	}
	// A full replace (decision 16): fields left out are gone, and the language falls back to the default.
	put, err = s.Put(ctx, "ch", contract.NicheProfile{Slogan: contract.Ptr("Eat plants")})
	want := profile.NicheProfile{Slogan: "Eat plants", ContentLanguage: profile.DefaultLanguage}
	if err != nil || !reflect.DeepEqual(put, want) {
		t.Fatalf("Put = %+v, %v; want %+v", put, err, want)
	}
	if got, _ := s.Get(ctx, "ch"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Get after replace = %+v; want %+v", got, want)
	}
	if other, _ := s.Get(ctx, "other"); !reflect.DeepEqual(other, profile.NicheProfile{ContentLanguage: profile.DefaultLanguage}) {
		t.Fatalf("another channel sees %+v", other)
	}
}
