package webhooks

import (
	"testing"
	"time"
)

// The configured retry schedule must give a delivery as many attempts as its queue gives receives.
func TestCheckScheduleMatchesTheQueue(t *testing.T) {
	if s, err := CheckSchedule(Schedule{time.Minute, 2 * time.Minute, 3 * time.Minute}); err != nil || s.Attempts() != 4 {
		t.Errorf("3 retries: %v, %v", s, err)
	}
	if _, err := CheckSchedule(Schedule{time.Minute}); err == nil {
		t.Error("a schedule of 2 attempts accepted for a queue that dead-letters after 4 receives")
	}
}
