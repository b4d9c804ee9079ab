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
	if l := s.opts.Limiter; l != nil {
		subject := ratelimit.Subject(p.KeyID, p.AccountID)
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
