// A route added in one place: the toy route below is registered with add_route only, and the
// router answers it (its pattern's groups, its parameters), answers 405 for another method on its
// path and 404 for a path no route has, and checks the token of a route that writes, before its
// handler, as the daemon asks before reading a body (Router::writes).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "service/http_router.hpp"
#include "service/service_context.hpp"

namespace ktune::service {
namespace {

HttpRequest request(std::string method, std::string path,
                    std::vector<std::pair<std::string, std::string>> query = {},
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.query = std::move(query);
  r.headers = std::move(headers);
  return r;
}

std::string error_code(const HttpResponse& res) { return nlohmann::json::parse(res.body)["error"]["kind"]; }

struct ToyRoutes : ::testing::Test {
  ToyRoutes() {
    ctx.token = "toy-secret";
    add_route(router, ctx, Method::kGet, "/v1/toy/([0-9]+)", Access::kRead,
              [this](const HttpRequest& req, HttpResponse& res) {
                ++reads;
                res.set_content("toy " + req.matches.at(1), "text/plain");
              },
              {"scale"});
    add_route(router, ctx, Method::kPost, "/v1/toy/([0-9]+)", Access::kWrite,
              [this](const HttpRequest&, HttpResponse& res) {
                ++writes;
                res.status = 201;
              });
  }
  Router router;
  ServiceContext ctx;
  int reads = 0, writes = 0;
};

TEST_F(ToyRoutes, TheRouteAnswersWithItsGroups) {
  HttpRequest req = request("GET", "/v1/toy/42", {{"scale", "2"}});
  HttpResponse res;
  EXPECT_EQ(router.dispatch(req, res), "/v1/toy/([0-9]+)");  // the metrics label
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "toy 42");
  EXPECT_EQ(reads, 1);
}

TEST_F(ToyRoutes, AnUnknownParameterIs400NamingTheKnownOnes) {
  HttpRequest req = request("GET", "/v1/toy/1", {{"bogus", "1"}});
  HttpResponse res;
  router.dispatch(req, res);
  EXPECT_EQ(res.status, 400);
  EXPECT_NE(res.body.find("bogus"), std::string::npos);
  EXPECT_NE(res.body.find("scale"), std::string::npos);
  EXPECT_EQ(reads, 0);
}

TEST_F(ToyRoutes, AnotherMethodOnItsPathIs405AndAnotherPathIs404) {
  HttpRequest del = request("DELETE", "/v1/toy/1");
  HttpResponse res;
  EXPECT_EQ(router.dispatch(del, res), "unmatched");
  EXPECT_EQ(res.status, 405);
  EXPECT_EQ(error_code(res), "method_not_allowed");
  HttpRequest other = request("GET", "/v1/toys");
  HttpResponse res404;
  router.dispatch(other, res404);
  EXPECT_EQ(res404.status, 404);
  EXPECT_EQ(error_code(res404), "not_found");
}

TEST_F(ToyRoutes, AWritingRouteChecksTheTokenFirst) {
  EXPECT_TRUE(router.writes("POST", "/v1/toy/3"));
  EXPECT_FALSE(router.writes("GET", "/v1/toy/3"));
  HttpRequest anonymous = request("POST", "/v1/toy/3");
  HttpResponse res;
  router.dispatch(anonymous, res);
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(writes, 0);
  HttpRequest wrong = request("POST", "/v1/toy/3", {}, {{"Authorization", "Bearer nope"}});
  HttpResponse res_wrong;
  router.dispatch(wrong, res_wrong);
  EXPECT_EQ(res_wrong.status, 401);
  HttpRequest good = request("POST", "/v1/toy/3", {}, {{"Authorization", "Bearer toy-secret"}});
  HttpResponse res_good;
  router.dispatch(good, res_good);
  EXPECT_EQ(res_good.status, 201);
  EXPECT_EQ(writes, 1);
}

}  // namespace
}  // namespace ktune::service
