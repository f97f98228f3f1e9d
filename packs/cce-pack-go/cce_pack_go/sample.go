// Package cache keeps recently used values in memory.
package cache

import (
	"container/list"
	"sync"
)

// Entry is one cached key and its value.
type Entry struct {
	Key   string
	Value []byte
}

// Store is what a cache needs from its backing storage.
type Store interface {
	Load(key string) ([]byte, error)
}

// LRU is a fixed-size cache that evicts the least recently used entry.
type LRU struct {
	mu    sync.Mutex
	limit int
	order *list.List
	items map[string]*list.Element
}

// New returns an empty cache holding at most limit entries.
func New(limit int) *LRU {
	return &LRU{limit: limit, order: list.New(), items: make(map[string]*list.Element)}
}

// Get returns the value for key and marks it as recently used.
func (c *LRU) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*Entry).Value, true
}

// Put stores value under key, evicting the oldest entry when the cache is full.
func (c *LRU) Put(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*Entry).Value = value
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&Entry{Key: key, Value: value})
	if c.order.Len() > c.limit {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*Entry).Key)
	}
}
