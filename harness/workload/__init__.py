"""The integrity workload: a generator of checkable records, transactional processors, a fault schedule."""
