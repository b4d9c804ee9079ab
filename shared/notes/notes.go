// Package notes holds the creator's free-text notes, which personalise generation.
package notes

import (
	"context"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
)

// MaxNotes is the most notes a channel holds (decision 9).
const MaxNotes = 500

// Source says where a note was written.
type Source string

const (
	FromApp Source = "app"
	FromMCP Source = "mcp"
)

// Note is a creator note (CreatorNote in the API).
type Note struct {
	ID        string    `json:"id"`
	Category  string    `json:"category"`
	Content   string    `json:"content"`
	Source    Source    `json:"source"`
	CreatedAt time.Time `json:"createdAt"`
}

// Repository is what notes need from storage.
type Repository interface {
	NewID() string
	ListNotes(ctx context.Context, channelID string) ([]Note, error)
	// CreateNote stores n unless the channel has max notes already (VALIDATION_ERROR), atomically.
	CreateNote(ctx context.Context, channelID string, n Note, max int) error
	DeleteNote(ctx context.Context, channelID, id string) error
}

// Service holds the notes' rules.
type Service struct {
	repo Repository
	now  func() time.Time
}

// NewService returns a Service.
func NewService(repo Repository, now func() time.Time) *Service {
	return &Service{repo: repo, now: now}
}

// Create stores a note written through source.
func (s *Service) Create(ctx context.Context, channelID string, in contract.NoteCreate, source Source) (Note, error) {
	if err := in.Validate(); err != nil {
		return Note{}, err
	}
	n := Note{
		ID: s.repo.NewID(), Category: string(in.Category), Content: in.Content, Source: source,
		CreatedAt: s.now().UTC().Truncate(time.Millisecond),
	}
	if err := s.repo.CreateNote(ctx, channelID, n, MaxNotes); err != nil {
		return Note{}, err
	}
	return n, nil
}

// List returns the channel's notes, newest first, of one category when category is not empty.
func (s *Service) List(ctx context.Context, channelID, category string) ([]Note, error) {
	all, err := s.repo.ListNotes(ctx, channelID)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, n := range all {
		if category == "" || n.Category == category {
			out = append(out, n)
		}
	}
	return out, nil
}

// Delete removes a note.
func (s *Service) Delete(ctx context.Context, channelID, id string) error {
	return s.repo.DeleteNote(ctx, channelID, id)
}
