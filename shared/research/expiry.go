package research

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
)

// DataLifetime is how long research keeps data of channels that did not authorise the service: their
// videos and statistics, and what is written from them (patterns and their sources). YouTube's Developer
// Policies allow 30 days before such data is refreshed or deleted; DynamoDB's TTL deletes an expired item
// typically within two days, so the data expires at 28 days, when every read treats it as gone and the
// scheduler deletes what no TTL covers (decision 49).
const DataLifetime = 28 * 24 * time.Hour

// DataExpiry is when data fetched at `fetched` expires. Every stored item holding such data expires by
// then: the item's own expiry where its whole life is shorter, else the scheduler's sweep.
func DataExpiry(fetched time.Time) time.Time { return fetched.Add(DataLifetime) }

// unknownAge is the expiry of data whose fetch time no build recorded (patterns stored before runs): past,
// and still a time the scheduler's index can hold.
func unknownAge() time.Time { return time.Unix(0, 0).UTC() }

// Empty says whether p holds no text and no sources.
func (p Patterns) Empty() bool { return p == Patterns{} }

// DataExpiresAt is when the state's research (its patterns and videos) expires: DataLifetime after the
// videos were fetched; already past for patterns of unknown age; zero when the state holds none.
func (s State) DataExpiresAt() time.Time {
	switch {
	case s.Set != nil:
		if e := DataExpiry(s.Set.DataFetched()); e.After(unknownAge()) {
			return e
		}
		return unknownAge()
	case !s.Patterns.Empty():
		return unknownAge()
	}
	return time.Time{}
}

// Expired says whether the state holds research that expired by now.
func (s State) Expired(now time.Time) bool {
	e := s.DataExpiresAt()
	return !e.IsZero() && !now.Before(e)
}

// Current is the state as readers may see it at now: without its research once that expired, in the
// minutes before the scheduler's pass deletes it.
func (s State) Current(now time.Time) State {
	if s.Expired(now) {
		s.Patterns, s.Set = Patterns{}, nil
	}
	return s
}

// VisitAt is when the scheduler looks at the channel next: at DueAt, or when its research expires if that
// comes first, so expired research is swept even for a channel that has left the schedule (no keywords).
func (s State) VisitAt() time.Time {
	e := s.DataExpiresAt()
	if e.IsZero() || !s.DueAt.IsZero() && s.DueAt.Before(e) {
		return s.DueAt
	}
	return e
}

// sweep deletes the channel's expired research (decision 49): its video set and the patterns the last run
// kept (runs of earlier builds kept them), then the state's patterns and set. The state goes last, so a
// sweep cut short is done again at the next pass (readers see expired research as none meanwhile). Unless a
// run holds the channel, the state comes due at once, so the visit goes on to refresh a channel that has
// keywords (budget allowing) and to take one without them off the schedule. It returns the state as
// stored; ErrStale when another writer changed it first.
func (s *Service) sweep(ctx context.Context, channelID string, st State, now time.Time) (State, error) {
	if st.Set != nil {
		if err := s.repo.DeleteChannelResearchVideos(ctx, channelID, st.Set.RunID); err != nil {
			return State{}, fmt.Errorf("research: sweep the videos of run %s: %w", st.Set.RunID, err)
		}
	}
	if st.LastRunID != "" {
		run, err := s.repo.ResearchRun(ctx, channelID, st.LastRunID)
		switch {
		case apperr.CodeOf(err) == apperr.NotFound:
		case err != nil:
			return State{}, err
		case !run.Patterns.Empty() && !run.Status.Active():
			run.Patterns, run.UpdatedAt = Patterns{}, now
			if err := s.repo.SaveResearchRun(ctx, &run, nil); err != nil && !errors.Is(err, ErrStale) {
				return State{}, err
			}
		}
	}
	st.Patterns, st.Set = Patterns{}, nil
	if !st.Holds(now) {
		st.DueAt = now
	}
	if err := s.repo.SaveResearchState(ctx, channelID, st); err != nil {
		return State{}, err
	}
	return s.repo.ResearchState(ctx, channelID)
}

// sweepOldRuns deletes, once per channel, what builds before decision 49 left of other channels' data
// beside the state, where no expiry or sweep would find it: the patterns ended runs kept, and video sets
// without an expiry that neither the state nor the active run names (superseded runs', failed deletions).
// The last run's patterns are left to its own follow-up and to the state's sweep.
func (s *Service) sweepOldRuns(ctx context.Context, channelID string, st State, now time.Time) (State, error) {
	runs, err := s.repo.ResearchRuns(ctx, channelID)
	if err != nil {
		return State{}, err
	}
	for _, run := range runs {
		if run.Status.Active() || run.ID == st.LastRunID || run.Patterns.Empty() {
			continue
		}
		run.Patterns, run.UpdatedAt = Patterns{}, now
		if err := s.repo.SaveResearchRun(ctx, &run, nil); err != nil && !errors.Is(err, ErrStale) {
			return State{}, err
		}
	}
	sets, err := s.repo.ResearchSetRuns(ctx, channelID)
	if err != nil {
		return State{}, err
	}
	for _, id := range sets {
		if id == st.ActiveRun || st.Set != nil && id == st.Set.RunID {
			continue
		}
		if err := s.repo.DeleteChannelResearchVideos(ctx, channelID, id); err != nil {
			return State{}, fmt.Errorf("research: sweep the videos of run %s: %w", id, err)
		}
	}
	st.OldRunsSwept = true
	if err := s.repo.SaveResearchState(ctx, channelID, st); err != nil {
		return State{}, err
	}
	return s.repo.ResearchState(ctx, channelID)
}
