package rest

import (
	"context"
	"time"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ratelimit"
)

// me is the Me schema: what the request's credential acts as.
type me struct {
	AccountID   string                   `json:"accountId"`
	ChannelID   string                   `json:"channelId"`
	Credential  auth.Method              `json:"credential"`
	KeyID       string                   `json:"keyId,omitempty"`
	KeyPrefix   string                   `json:"keyPrefix,omitempty"`
	AccessUntil time.Time                `json:"accessUntil"`
	RateLimits  map[string]rateLimitView `json:"rateLimits"`
	Usage       *usageView               `json:"generationUsage,omitempty"`
}

// usageView is the GenerationUsage schema.
type usageView struct {
	Month        string    `json:"month"`
	Generations  int64     `json:"generations"`
	Limit        int       `json:"limit"`
	InputTokens  int64     `json:"inputTokens"`
	OutputTokens int64     `json:"outputTokens"`
	ResetsAt     time.Time `json:"resetsAt"`
}

// rateLimitView is the RateLimitStatus schema.
type rateLimitView struct {
	Limit        int64     `json:"limit"`
	Remaining    int64     `json:"remaining"`
	ResetSeconds int       `json:"resetSeconds"`
	ResetAt      time.Time `json:"resetAt"`
}

// getMe answers GET /api/v1/me. The call counts in its own rate group like any other (a free endpoint
// would be a free table read), so that group's budget is the one this call left; the other groups are
// read without counting.
func (s *Server) getMe(ctx context.Context, c *call) (any, error) {
	p := c.principal
	acct, key, err := s.opts.Services.Accounts.Credential(ctx, p.AccountID, p.KeyID)
	if err != nil {
		return nil, err
	}
	out := me{AccountID: p.AccountID, ChannelID: p.ChannelID, Credential: p.Method,
		AccessUntil: acct.AccessUntil.UTC(), RateLimits: map[string]rateLimitView{}}
	if key != nil {
		out.KeyID, out.KeyPrefix = key.ID, key.Prefix
	}
	if u := s.opts.Services.Usage; u != nil {
		clock := s.opts.Services.Clock
		if clock == nil {
			clock = time.Now
		}
		now := clock().UTC()
		month := now.Format("2006-01")
		n, in, outTok, err := u.GenerationUsage(ctx, p.AccountID, month)
		if err != nil {
			return nil, err
		}
		out.Usage = &usageView{Month: month, Generations: n, Limit: s.opts.Services.MonthlyQuota, InputTokens: in, OutputTokens: outTok,
			ResetsAt: time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)}
	}
	if l := s.opts.Limiter; l != nil {
		subject := ratelimit.Subject(p.KeyHash, p.AccountID)
		for _, group := range []contract.RateGroup{contract.RateGeneration, contract.RateOther} {
			st := c.rate
			if group != c.op.RateGroup {
				if st, err = l.Peek(ctx, subject, string(group)); err != nil {
					return nil, err
				}
			}
			out.RateLimits[string(group)] = rateLimitView{Limit: st.Limit, Remaining: st.Remaining,
				ResetSeconds: st.ResetAfter, ResetAt: st.Reset.UTC()}
		}
	}
	return out, nil
}
