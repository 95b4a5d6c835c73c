#include "sink/mysql/ddl_rewrite.h"

#include <cctype>
#include <vector>

namespace sluice::sink {

namespace {

enum class Tok : uint8_t { kSpace, kWord, kQuoted, kComment, kTiDbComment, kPunct };

struct Token {
  Tok kind;
  std::string_view text;
  bool drop = false;
};

bool IsWordChar(unsigned char c) { return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

std::vector<Token> Tokenize(std::string_view q) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < q.size()) {
    size_t start = i;
    unsigned char c = q[i];
    Tok kind;
    if (std::isspace(c)) {
      while (i < q.size() && std::isspace(static_cast<unsigned char>(q[i]))) ++i;
      kind = Tok::kSpace;
    } else if (c == '\'' || c == '"' || c == '`') {
      ++i;
      while (i < q.size()) {
        if (q[i] == '\\' && c != '`' && i + 1 < q.size()) {
          i += 2;
        } else if (q[i] == static_cast<char>(c)) {
          ++i;
          if (i < q.size() && q[i] == static_cast<char>(c)) {
            ++i;  // Doubled quote.
          } else {
            break;
          }
        } else {
          ++i;
        }
      }
      kind = Tok::kQuoted;
    } else if (q.substr(i, 2) == "/*") {
      size_t end = q.find("*/", i + 2);
      i = end == std::string_view::npos ? q.size() : end + 2;
      kind = q.substr(start, 4) == "/*T!" ? Tok::kTiDbComment : Tok::kComment;
    } else if (c == '#' || q.substr(i, 3) == "-- ") {
      size_t end = q.find('\n', i);
      i = end == std::string_view::npos ? q.size() : end;
      kind = Tok::kComment;
    } else if (IsWordChar(c)) {
      while (i < q.size() && IsWordChar(static_cast<unsigned char>(q[i]))) ++i;
      kind = Tok::kWord;
    } else {
      ++i;
      kind = Tok::kPunct;
    }
    out.push_back(Token{kind, q.substr(start, i - start)});
  }
  return out;
}

bool Is(const Token& t, std::string_view word) {
  if (t.kind != Tok::kWord || t.text.size() != word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(t.text[i])) != word[i]) return false;
  }
  return true;
}

bool IsPunct(const Token& t, char c) {
  return t.kind == Tok::kPunct && t.text.size() == 1 && t.text[0] == c;
}

bool IsNumber(const Token& t) {
  return t.kind == Tok::kWord && std::isdigit(static_cast<unsigned char>(t.text[0]));
}

class Rewriter {
 public:
  explicit Rewriter(std::string_view q) : toks_(Tokenize(q)) {}

  std::string Run() {
    for (size_t i = 0; i < toks_.size(); ++i) {
      Token& t = toks_[i];
      if (t.drop) continue;
      if (t.kind == Tok::kTiDbComment || Is(t, "CLUSTERED") || Is(t, "NONCLUSTERED")) {
        t.drop = true;
      } else if (Is(t, "AUTO_RANDOM")) {
        t.drop = true;
        size_t j = Next(i);
        if (j < toks_.size() && IsPunct(toks_[j], '(')) DropThrough(j, ')');
      } else if (Is(t, "SHARD_ROW_ID_BITS") || Is(t, "PRE_SPLIT_REGIONS") ||
                 Is(t, "AUTO_ID_CACHE") || Is(t, "AUTO_RANDOM_BASE")) {
        DropOption(i, /*number_only=*/true);
      } else if (Is(t, "TTL_ENABLE") || Is(t, "TTL_JOB_INTERVAL")) {
        DropOption(i, /*number_only=*/false);
      } else if (Is(t, "TTL")) {
        DropTtl(i);
      } else if (Is(t, "PLACEMENT")) {
        size_t j = Next(i);
        if (j < toks_.size() && Is(toks_[j], "POLICY")) {
          toks_[j].drop = true;
          DropOption(i, /*number_only=*/false);
        }
      } else if (Is(t, "VECTOR")) {
        RewriteVector(i);
      }
    }
    // Whitespace that only separated dropped tokens goes with them.
    std::string out;
    bool after_drop = false;
    for (const Token& t : toks_) {
      if (t.drop) {
        after_drop = true;
        continue;
      }
      if (t.kind == Tok::kSpace && after_drop &&
          (out.empty() || std::isspace(static_cast<unsigned char>(out.back())))) {
        continue;
      }
      if (t.kind != Tok::kSpace) after_drop = false;
      out.append(t.text);
    }
    return out;
  }

 private:
  // The next significant (not space, not comment, not dropped) token after i.
  size_t Next(size_t i) const {
    for (size_t j = i + 1; j < toks_.size(); ++j) {
      if (toks_[j].kind != Tok::kSpace && toks_[j].kind != Tok::kComment && !toks_[j].drop) {
        return j;
      }
    }
    return toks_.size();
  }
  size_t Prev(size_t i) const {
    for (size_t j = i; j-- > 0;) {
      if (toks_[j].kind != Tok::kSpace && toks_[j].kind != Tok::kComment && !toks_[j].drop) {
        return j;
      }
    }
    return toks_.size();
  }

  // Drops from `open` through the matching `close`.
  void DropThrough(size_t open, char close) {
    char opener = toks_[open].text[0];
    int depth = 0;
    for (size_t j = open; j < toks_.size(); ++j) {
      toks_[j].drop = true;
      if (IsPunct(toks_[j], opener)) ++depth;
      if (IsPunct(toks_[j], close) && --depth == 0) return;
    }
  }

  // Drops `name [=] value` at i, and a comma that would be left dangling.
  void DropOption(size_t i, bool number_only) {
    size_t j = Next(i);
    bool eq = j < toks_.size() && IsPunct(toks_[j], '=');
    size_t v = eq ? Next(j) : j;
    if (v >= toks_.size()) return;
    bool value_ok = number_only ? IsNumber(toks_[v])
                                : (toks_[v].kind == Tok::kWord || toks_[v].kind == Tok::kQuoted);
    if (!value_ok ||
        (!eq && !number_only && toks_[v].kind == Tok::kWord && !Is(toks_[i], "PLACEMENT"))) {
      return;
    }
    toks_[i].drop = true;
    if (eq) toks_[j].drop = true;
    toks_[v].drop = true;
    DropDanglingComma(i, v);
  }

  // TTL = `col` + INTERVAL n UNIT
  void DropTtl(size_t i) {
    size_t eq = Next(i);
    if (eq >= toks_.size() || !IsPunct(toks_[eq], '=')) return;
    std::vector<size_t> drop = {i, eq};
    size_t j = Next(eq);
    if (j >= toks_.size()) return;
    drop.push_back(j);  // The column.
    size_t plus = Next(j);
    if (plus < toks_.size() && IsPunct(toks_[plus], '+')) {
      size_t interval = Next(plus);
      size_t amount = Next(interval);
      size_t unit = Next(amount);
      if (unit >= toks_.size() || !Is(toks_[interval], "INTERVAL")) return;
      drop.insert(drop.end(), {plus, interval, amount, unit});
    }
    for (size_t d : drop) toks_[d].drop = true;
    DropDanglingComma(i, drop.back());
  }

  void DropDanglingComma(size_t first, size_t last) {
    size_t p = Prev(first);
    if (p < toks_.size() && IsPunct(toks_[p], ',')) {
      toks_[p].drop = true;
      return;
    }
    size_t n = Next(last);
    if (n >= toks_.size() || !IsPunct(toks_[n], ',')) return;
    size_t after = Next(n);
    size_t after2 = Next(after);
    if (after < toks_.size() &&
        (Is(toks_[after], "DEFAULT") || (after2 < toks_.size() && IsPunct(toks_[after2], '=')))) {
      toks_[n].drop = true;
    }
  }

  // `name` VECTOR[<FLOAT>][(n)] -> `name` LONGTEXT
  void RewriteVector(size_t i) {
    size_t p = Prev(i);
    if (p >= toks_.size()) return;
    const Token& prev = toks_[p];
    bool name =
        (prev.kind == Tok::kQuoted && prev.text[0] == '`') ||
        (prev.kind == Tok::kWord && !Is(prev, "COLUMN") && !Is(prev, "TABLE") &&
         !Is(prev, "EXISTS") && !Is(prev, "INTO") && !Is(prev, "FROM") && !Is(prev, "DATABASE") &&
         !Is(prev, "SCHEMA") && !Is(prev, "INDEX") && !Is(prev, "KEY") && !Is(prev, "ON") &&
         !Is(prev, "BY") && !Is(prev, "TO") && !Is(prev, "AS") && !Is(prev, "DROP"));
    if (!name) return;
    size_t j = Next(i);
    if (j < toks_.size() && IsPunct(toks_[j], '<')) {
      DropThrough(j, '>');
      j = Next(i);
    }
    if (j < toks_.size() && IsPunct(toks_[j], '(')) DropThrough(j, ')');
    toks_[i].text = "LONGTEXT";
  }

  std::vector<Token> toks_;
};

}  // namespace

std::string RewriteDdlForMysql(std::string_view query) { return Rewriter(query).Run(); }

bool IsTiDbOnlyDdl(model::ActionType type) {
  using model::ActionType;
  switch (type) {
    case ActionType::kShardRowId:
    case ActionType::kLockTable:
    case ActionType::kUnlockTable:
    case ActionType::kRepairTable:
    case ActionType::kSetTiFlashReplica:
    case ActionType::kUpdateTiFlashReplicaStatus:
    case ActionType::kModifyTableAutoIdCache:
    case ActionType::kRebaseAutoRandomBase:
    case ActionType::kAlterTableAttributes:
    case ActionType::kAlterTablePartitionAttributes:
    case ActionType::kCreatePlacementPolicy:
    case ActionType::kAlterPlacementPolicy:
    case ActionType::kDropPlacementPolicy:
    case ActionType::kAlterTablePartitionPlacement:
    case ActionType::kModifySchemaDefaultPlacement:
    case ActionType::kAlterTablePlacement:
    case ActionType::kAlterCacheTable:
    case ActionType::kAlterNoCacheTable:
    case ActionType::kAlterTableStatsOptions:
    case ActionType::kFlashbackCluster:
    case ActionType::kAlterTtlInfo:
    case ActionType::kAlterTtlRemove:
    case ActionType::kCreateResourceGroup:
    case ActionType::kAlterResourceGroup:
    case ActionType::kDropResourceGroup:
    case ActionType::kAddColumnarIndex:
    case ActionType::kModifyEngineAttribute:
    case ActionType::kAlterTableMode:
    case ActionType::kRefreshMeta:
    case ActionType::kModifySchemaReadOnly:
      return true;
    default:
      return false;
  }
}

}  // namespace sluice::sink
