-- Kotae 0.1's DATA/conversations.db (store/sqlite_conversations.cpp as released), with one conversation.
CREATE TABLE IF NOT EXISTS conversations(
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  collection TEXT NOT NULL,
  title TEXT NOT NULL,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  turn_count INTEGER NOT NULL,
  turns TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS conversations_by_tenant ON conversations(tenant, updated_at);
INSERT INTO conversations VALUES ('conv_0123456789abcdef', 'alice', 'faq', 'What is WAL?', 1764000000.5,
  1764000100.25, 1, '[{"question":"What is WAL?","answer":"Write-ahead logging.","sources":[]}]');
