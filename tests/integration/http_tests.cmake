# The node's HTTP endpoint end to end (store/http): /metrics parsed by promtool and checked
# against a scripted libstrata workload, /v1/tiers, /healthz, /readyz, and deploy/'s
# Prometheus config and Grafana dashboard. Included from this folder's CMakeLists.txt.
if(TARGET strata_client_e2e_support AND TARGET strata::testing)
  set(promtool "")
  if(STRATA_PROMTOOL)
    set(promtool STRATA_PROMTOOL="${STRATA_PROMTOOL}")
  endif()
  strata_add_test(NAME integration_http_metrics_test
                  SOURCES ${CMAKE_CURRENT_LIST_DIR}/http_metrics_test.cc
                  LIBS strata_client_e2e_support strata::store_http strata::testing
                       absl::strings
                  LABELS integration
                  DEFINITIONS STRATA_SOURCE_DIR="${PROJECT_SOURCE_DIR}" ${promtool})
endif()
