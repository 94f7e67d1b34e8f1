//go:build !kgo_before_1_21

package main

import "github.com/twmb/franz-go/pkg/kmsg"

// OffsetFetch v10 names a topic by its ID (kmsg of franz-go v1.21.0 and later knows the field).
func setOffsetFetchTopicID(t *kmsg.OffsetFetchRequestGroupTopic, id [16]byte) { t.TopicID = id }

func offsetFetchTopicID(t *kmsg.OffsetFetchResponseGroupTopic) [16]byte { return t.TopicID }
