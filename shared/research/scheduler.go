package research

import (
	"context"
	"errors"
	"hash/fnv"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/quota"
)

// scheduleBatch is the most index entries one scheduler pass looks at; the next pass takes the rest.
const scheduleBatch = 200

// oldSweepsPerPass bounds the one-off sweeps of earlier builds' leftovers a pass makes (each reads all the
// channel's runs and sets), so the passes after the deploy stay within the function's timeout; a channel
// past it stays due for the next pass.
const oldSweepsPerPass = 20

// ScheduleReport says what a scheduler pass did.
type ScheduleReport struct {
	Due         int        // entries due
	Started     int        // runs started (the research was older than the interval, or the keywords changed)
	Resumed     int        // runs that waited for quota, queued again
	Cleared     int        // channels taken off the schedule (no keywords any more)
	Swept       int        // channels whose research expired and was deleted (decision 49)
	OldSwept    int        // channels whose earlier builds' leftovers were swept (once each, decision 49)
	BudgetShort int        // entries left for a later pass: the day's budget has no room for them
	Limited     int        // keyword changes past their channel's or account's on-demand limits, moved to the next day
	Left        quota.Cost // the day's budget left after the pass, as the pass reckoned it
}

// Schedule is one pass of the scheduler (an EventBridge schedule in the cloud, a timer locally): it looks
// at the channels due, oldest first, and starts a run for each whose research is old (or whose keywords
// changed), and queues again the runs that waited for quota once the new budget day has begun, while the
// day's budget has room for a whole run. A channel whose research expired has it deleted first (decision 49).
func (s *Service) Schedule(ctx context.Context) (ScheduleReport, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	usage, err := s.repo.QuotaUsed(ctx, s.clock.Day(now))
	if err != nil {
		return ScheduleReport{}, err
	}
	room := s.cfg.Daily.Sub(usage.Used)
	for _, b := range usage.Exhausted {
		room = room.With(b, 0) // the API said this bucket is spent today
	}
	if s.cfg.Source != SourceYouTube {
		room = s.cfg.Daily // the offline sample spends nothing
	}
	dues, err := s.repo.DueResearch(ctx, now, scheduleBatch)
	if err != nil {
		return ScheduleReport{}, err
	}
	rep := ScheduleReport{Due: len(dues)}
	for _, d := range dues {
		if err := s.visit(ctx, d, now, &room, &rep); err != nil {
			return rep, err
		}
	}
	rep.Left = room.AtLeast0()
	return rep, nil
}

func (s *Service) visit(ctx context.Context, d Due, now time.Time, room *quota.Cost, rep *ScheduleReport) error {
	st, err := s.repo.ResearchState(ctx, d.ChannelID)
	if err != nil {
		return err
	}
	switch {
	case !d.Kick && !st.VisitAt().Equal(d.At) && !st.DueAt.Equal(d.At):
		// An entry no state names (defensive: states move their own). One at DueAt is the entry of a state
		// stored before research expired (decision 49), still the channel's.
		return s.repo.DeleteResearchDue(ctx, d)
	case d.Kick && !st.StartedAt.IsZero() && !st.StartedAt.Before(d.At):
		return s.repo.DeleteResearchDue(ctx, d) // a run started since the keywords changed
	}
	if st.Expired(now) {
		if st, err = s.sweep(ctx, d.ChannelID, st, now); err != nil {
			if errors.Is(err, ErrStale) {
				return nil // another writer got in first; the state's entry brings the channel back
			}
			return err
		}
		rep.Swept++
	}
	if !st.OldRunsSwept && st.Version > 0 {
		if rep.OldSwept == oldSweepsPerPass {
			return nil
		}
		if st, err = s.sweepOldRuns(ctx, d.ChannelID, st, now); err != nil {
			if errors.Is(err, ErrStale) {
				return nil
			}
			return err
		}
		rep.OldSwept++
	}
	if st.ActiveRun != "" {
		run, err := s.repo.ResearchRun(ctx, d.ChannelID, st.ActiveRun)
		if err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		if err == nil && run.Status == WaitingQuota {
			// A run waiting for quota is resumed, even past its lease: it lost nothing by waiting.
			return s.resume(ctx, st, run, now, room, rep)
		}
		if err == nil && run.Status.Active() && st.Holds(now) {
			return nil // its own messages carry it
		}
	}
	trigger := TriggerSchedule
	if d.Kick {
		trigger = TriggerProfile
	}
	need, err := s.startCeiling(ctx, d.ChannelID, now)
	if err != nil {
		return err
	}
	if !need.Within(s.roomFor(trigger, *room)) {
		rep.BudgetShort++
		return nil
	}
	_, err = s.Start(ctx, d.ChannelID, trigger)
	switch {
	case apperr.CodeOf(err) == apperr.Validation:
		// The profile has no keywords any more: nothing to research until they come back (a PUT with
		// keywords writes a kick). Research it still holds keeps it in the index until that expires.
		if !d.Kick || !st.DueAt.IsZero() {
			st.DueAt = time.Time{}
			if err := s.repo.SaveResearchState(ctx, d.ChannelID, st); err != nil && !errors.Is(err, ErrStale) {
				return err
			}
		}
		rep.Cleared++
	case apperr.CodeOf(err) == apperr.Conflict:
		return nil // a run started meanwhile; a kick stays for after it
	case apperr.CodeOf(err) == apperr.UsageLimit:
		// A keyword change past the channel's or the account's on-demand limits (decision 46): the new
		// keywords are researched as a scheduled refresh on the next budget day, at a time of its first
		// half drawn from the channel id, so deferred changes do not all come due at midnight.
		if next := s.clock.NextDay(now).Add(spread(d.ChannelID)); st.DueAt.IsZero() || st.DueAt.After(next) {
			st.DueAt = next
			if err := s.repo.SaveResearchState(ctx, d.ChannelID, st); err != nil && !errors.Is(err, ErrStale) {
				return err
			}
		}
		rep.Limited++
	case err != nil:
		return err
	default:
		rep.Started++
		*room = room.Sub(need)
	}
	if d.Kick {
		return s.repo.DeleteResearchDue(ctx, d)
	}
	return nil
}

// resume queues again the step of a run that waited for quota, once the budget day it waited for has come
// and the budget has room for what the run still needs.
func (s *Service) resume(ctx context.Context, st State, run Run, now time.Time, room *quota.Cost, rep *ScheduleReport) error {
	if run.WaitingUntil != nil && now.Before(*run.WaitingUntil) {
		return nil // the day it waits for has not begun
	}
	d := run.Discovery
	if d == DiscoverMore {
		d = DiscoverKnown // its search is made only when there is room for it
	}
	need := s.cfg.Plan.CeilingFrom(run.Steps[run.Next].Name, d)
	if !need.Within(s.roomFor(run.Trigger, *room)) {
		rep.BudgetShort++
		return nil
	}
	run.Status, run.WaitingUntil, run.Message, run.UpdatedAt = Queued, nil, "", now
	st.LeaseUntil = now.Add(s.cfg.Lease)
	st.DueAt = st.LeaseUntil
	if err := s.repo.SaveResearchRunAndState(ctx, &run, st); err != nil {
		if errors.Is(err, ErrStale) {
			return nil // another pass resumed it
		}
		return err
	}
	if err := send(ctx, s.queue, run, run.Steps[run.Next].Name); err != nil {
		return err
	}
	*room = room.Sub(need)
	rep.Resumed++
	return nil
}

// roomFor is the part of the day's room a run of the trigger may reserve: scheduled refreshes all of it,
// on-demand runs what the scheduled refreshes' reserve leaves (decision 46; the pipeline holds them to it).
func (s *Service) roomFor(trigger string, room quota.Cost) quota.Cost {
	if trigger == TriggerSchedule || s.cfg.Source != SourceYouTube {
		return room
	}
	return room.Sub(s.cfg.Daily.Sub(s.cfg.OnDemand()))
}

// startCeiling is the most a run the scheduler starts for the channel now may need: a new niche's, or, when
// the niche's channels are known, a refresh's without searches (a rediscovery's one search is made only
// when the searches bucket has room, decision 47), so a day whose searches ran out still refreshes.
func (s *Service) startCeiling(ctx context.Context, channelID string, now time.Time) (quota.Cost, error) {
	p, err := s.repo.GetProfile(ctx, channelID)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return quota.Cost{}, err
	}
	n, err := NicheOf(p)
	if err != nil {
		return quota.Cost{}, nil // no keywords: Start says so, and spends nothing
	}
	known, ok, err := s.repo.NicheChannels(ctx, n.Key(s.cfg.Source))
	if err != nil {
		return quota.Cost{}, err
	}
	return s.cfg.Plan.CeilingFrom(StepDiscover, discoveryOf(known, ok, now)), nil
}

// discoveryOf is how a run finds a niche's channels, from what is known of them at now; a rediscovery is
// reckoned as a refresh (its search is made only when there is room for it).
func discoveryOf(known KnownChannels, ok bool, now time.Time) Discovery {
	if !ok || len(known.IDs) == 0 || now.Sub(known.DiscoveredAt) >= KnownChannelsFor {
		return DiscoverNew
	}
	return DiscoverKnown
}

// refreshAt is when a channel's next scheduled refresh comes due, for research due again at `due`: later
// by the channel's fixed offset within spreadWindow, so refreshes of channels researched at the same moment
// (one pass, or the runs resumed when a budget day begins) do not all start at one pass a week later. The
// interval stays a lower bound: a refresh never comes while the niche's research it made is fresh.
func refreshAt(channelID string, due time.Time) time.Time {
	return due.Add(spread(channelID))
}

// spreadWindow is the part of a budget day over which deferred and due refreshes are spread.
const spreadWindow = 12 * time.Hour

// spread is a channel's fixed offset within spreadWindow, to the minute.
func spread(channelID string) time.Duration {
	h := fnv.New64a() // 64 bits: FNV-32a's low bits hardly differ between ids that differ in a character
	_, _ = h.Write([]byte(channelID))
	return time.Duration(h.Sum64()%uint64(spreadWindow/time.Minute)) * time.Minute
}
