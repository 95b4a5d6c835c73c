// The event dispatcher behind the real event service and event store: the
// service's budget is handed back through the dispatcher's flush acks.
#include <gtest/gtest.h>

#include "dispatcher/event_dispatcher.h"
#include "dispatcher/test_helpers.h"
#include "eventservice/service_fixture.h"

namespace sluice::dispatcher {
namespace {

namespace es = eventservice::testing;

class DispatcherWithServiceTest : public es::EventServiceFixture {
 protected:
  testing::FakeSink sink_;
  BlockEventExecutor executor_{2};
};

TEST_F(DispatcherWithServiceTest, LargeTransactionAndDdlFlowThroughWithCredit) {
  auto v2 = es::IntHandleSchema(kTable, Ts(25), /*with_extra=*/true);
  schema_.AddSchema(kTable, v2);
  schema_.AddDdl(es::Ddl(kTable, 25, "ALTER TABLE t ADD COLUMN extra BIGINT DEFAULT 42", v2));
  StartService();

  const DispatcherId id = es::Disp(1);
  DispatcherOptions o;
  o.id = id;
  o.table_id = kTable;
  o.start_ts = Ts(10);
  o.sink = &sink_;
  o.executor = &executor_;
  eventservice::EventService* service = service_.get();
  o.ack_bytes = [service, id](size_t n) { service->Ack(id, n); };
  auto d = EventDispatcher::Create(std::move(o));
  ASSERT_TRUE(d.ok());

  eventservice::DispatcherRegistration reg;
  reg.id = id;
  reg.table_id = kTable;
  reg.start_ts = Ts(10);
  reg.memory_budget = 4096;
  reg.consumer = d->get();
  ASSERT_TRUE(service_->RegisterDispatcher(std::move(reg)).ok());
  auto kv = puller_.last();

  KvBatch batch;
  for (int i = 0; i < 60; ++i) batch.push_back(es::Put(kTable, i, es::BigRowValue(i, 300), 20, 15));
  batch.push_back(es::Put(kTable, 100, es::RowValue("after", 1), 30, 28));
  Persist(kv.get(), std::move(batch));
  kv->AdvanceResolvedTs(Ts(40));

  // The "downstream" flushes whatever is pending until everything is through.
  ASSERT_TRUE(PollUntil(
      [&] {
        sink_.Flush();
        return (*d)->checkpoint() == Ts(40);
      },
      std::chrono::seconds(20)))
      << sink_.Log() << " checkpoint " << (*d)->checkpoint().value() << " unacked "
      << service_->UnackedBytes(id) << " sink pending " << sink_.pending() << " scans "
      << service_->stats().scans << " dml " << service_->stats().dml_events;
  std::string log = sink_.Log();
  size_t ddl = log.find("D25");
  ASSERT_NE(ddl, std::string::npos) << log;
  EXPECT_EQ(log.find("M20", ddl), std::string::npos) << log;  // All of txn 20 before the DDL.
  EXPECT_EQ(log.substr(ddl), "D25 M30");
  EXPECT_GT(std::count(log.begin(), log.end(), 'M'), 5);  // Txn 20 came in pieces.
  EXPECT_EQ(service_->UnackedBytes(id), 0u);
  EXPECT_TRUE((*d)->status().ok());
  service_->RemoveDispatcher(id);
}

}  // namespace
}  // namespace sluice::dispatcher
