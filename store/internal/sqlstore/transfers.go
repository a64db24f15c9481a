package sqlstore

import (
	"context"

	"github.com/drivemail/drivemail/store"
)

// CreateTransfer stores a new file-transfer URI's record.
func (s *DB) CreateTransfer(ctx context.Context, id string, t store.Transfer) error {
	n, err := s.exec(ctx, `INSERT INTO transfers (id_hash, user_id, file_id, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id_hash) DO NOTHING`, store.Hash(id), t.UserID, t.FileID, ms(t.ExpiresAt))
	if err == nil && n == 0 {
		err = store.ErrDuplicate
	}
	return s.wrap("create transfer", err)
}

// CompleteTransfer records the Drive file of a live, unfinished transfer.
func (s *DB) CompleteTransfer(ctx context.Context, id, fileID string) error {
	n, err := s.exec(ctx, `UPDATE transfers SET file_id = ? WHERE id_hash = ? AND expires_at > ? AND file_id = ''`,
		fileID, store.Hash(id), ms(s.now()))
	if err != nil {
		return s.wrap("complete transfer", err)
	}
	if n == 1 {
		return nil
	}
	if _, err := s.GetTransfer(ctx, id); err != nil {
		return err
	}
	return store.ErrUsed
}

// GetTransfer returns a live transfer.
func (s *DB) GetTransfer(ctx context.Context, id string) (store.Transfer, error) {
	var (
		t   store.Transfer
		exp int64
	)
	err := s.queryRow(ctx, `SELECT user_id, file_id, expires_at FROM transfers WHERE id_hash = ? AND expires_at > ?`,
		store.Hash(id), ms(s.now())).Scan(&t.UserID, &t.FileID, &exp)
	if err != nil {
		return store.Transfer{}, s.wrap("get transfer", err)
	}
	t.ExpiresAt = fromMS(exp)
	return t, nil
}
