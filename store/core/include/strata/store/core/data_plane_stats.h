// DataPlaneStats: what the node's data plane (store/dataplane) reports about itself.
//
// A plain value, defined here so that whoever shows it (store/http's /metrics) depends on
// store/core only and not on the data plane (docs/architecture.md, "Dependency rules").
// store/dataplane's DataPlaneServer::Stats() fills it. No locks, no errors.
#pragma once

#include <cstdint>

#include "strata/base/latency_histogram.h"

namespace strata::store::core {

// Counters since Start (monotonic except the two gauges; a snapshot, not a consistent cut).
struct DataPlaneStats {
  uint64_t fetch_requests = 0;  // FETCH messages received
  uint64_t fetch_failures = 0;  // of those, ended with a non-OK status
  uint64_t read_requests = 0;   // READ messages received
  uint64_t read_failures = 0;   // of those, refused (no lease granted) or failed mid-transfer
  uint64_t ranges_sent = 0;     // FETCH_DATA sends completed OK
  uint64_t bytes_out = 0;       // their payload bytes
  uint64_t put_requests = 0;    // PUT_DATA messages received
  uint64_t put_failures = 0;    // of those, ended with a non-OK status
  uint64_t bytes_in = 0;        // PUT_DATA payload bytes landed and recorded
  uint64_t malformed = 0;       // headers or range lists that did not decode
  uint64_t replies_failed = 0;  // FETCH_DONE / PUT_DONE sends that failed
  uint64_t peers_connected = 0;
  uint64_t peers_failed = 0;
  uint64_t peers_refused = 0;       // connections whose credential was refused (authentication)
  uint64_t requests_in_flight = 0;  // gauge: FETCH / PUT_DATA received, DONE not yet sent
  uint64_t sends_in_flight = 0;     // gauge: FETCH_DATA sends not yet completed
  // Transfer latency: from the request's arrival on the progress thread until its
  // FETCH_DONE / PUT_DONE send completed, whatever the status (requests whose header did
  // not decode, and those answered while the server stops, are not timed).
  base::HistogramSnapshot fetch_latency;  // FETCH
  base::HistogramSnapshot read_latency;   // READ (the lease, the grant and every item)
  base::HistogramSnapshot put_latency;    // PUT_DATA
};

// What the same-host channel (store/dataplane/same_host_server.h) reports: counters since
// Start except `clients`, a gauge.
struct SameHostStats {
  uint64_t clients = 0;        // connections open now
  uint64_t clients_total = 0;  // connections that completed HELLO
  uint64_t refused = 0;        // HELLOs refused (credential, limit) or never completed
  uint64_t reads = 0;          // READ_REPLYs with a lease
  uint64_t read_failures = 0;  // READ_REPLYs with an error
  uint64_t bytes_granted = 0;  // bytes of the items those leases covered
  uint64_t puts = 0;           // PUTs committed (or found existing)
  uint64_t put_failures = 0;
  uint64_t bytes_put = 0;  // bytes copied from staging files into puts
  uint64_t malformed = 0;  // messages that did not decode, releases of leases not its own
  uint64_t leases_released_at_close = 0;
  uint64_t bytes_granted_hbm = 0;       // of bytes_granted, those with an HBM copy offered
  uint64_t leases_expired_in_copy = 0;  // LEASE_CHECKs that found the lease expired
};

}  // namespace strata::store::core
