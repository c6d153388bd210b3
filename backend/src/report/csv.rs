//! The plan's long lists as CSV tables for spreadsheets and data frames (`ttdl run --out DIR`:
//! `schedule.csv`, `messages.csv`, `links.csv`): one row per row of the JSON document's
//! `schedule`, `messages` and `network.links` (SPEC §4), in the same order, under the same
//! field names, written row by row.
//!
//! A field that is a list in the JSON is one field here: a resource as the summary names it
//! (`3->4`, `inject@3`, `eject@3`), a route as its node ids separated by spaces (a multicast
//! tree as its `from->to` edges), a multicast's readers as task ids separated by spaces. A JSON
//! `null` is an empty field.

use std::fmt::Write as _;
use std::io::Write;

use super::json::Rows;
use crate::traffic::Route;

/// A field of numbers and names: never quoted, so a reusable buffer serves every row.
struct Field(String);

impl Field {
    fn num(&mut self, n: impl std::fmt::Display) -> &[u8] {
        self.0.clear();
        let _ = write!(self.0, "{n}");
        self.0.as_bytes()
    }

    fn opt(&mut self, n: Option<u64>) -> &[u8] {
        self.0.clear();
        if let Some(n) = n {
            let _ = write!(self.0, "{n}");
        }
        self.0.as_bytes()
    }

    fn list<T: std::fmt::Display>(&mut self, items: impl IntoIterator<Item = T>) -> &[u8] {
        self.0.clear();
        for (i, x) in items.into_iter().enumerate() {
            if i > 0 {
                self.0.push(' ');
            }
            let _ = write!(self.0, "{x}");
        }
        self.0.as_bytes()
    }
}

fn writer<W: Write>(w: W) -> ::csv::Writer<W> {
    ::csv::WriterBuilder::new()
        .buffer_capacity(1 << 16)
        .from_writer(w)
}

/// `schedule.csv`: `msg,link,start,end`, one row per fragment per resource it holds, by start.
pub fn schedule(rows: &Rows, w: impl Write) -> std::io::Result<()> {
    let mut out = writer(w);
    out.write_record(["msg", "link", "start", "end"])?;
    let mut f = Field(String::new());
    for h in rows.holds() {
        out.write_field(f.num(h.msg()))?;
        out.write_field(f.num(h.resource()))?;
        out.write_field(f.num(h.start()))?;
        out.write_field(f.num(h.end()))?;
        out.write_record(None::<&[u8]>)?;
    }
    out.flush()?;
    Ok(())
}

/// `messages.csv`: one row per message, its program window beside the schedule's.
pub fn messages(rows: &Rows, w: impl Write) -> std::io::Result<()> {
    let mut out = writer(w);
    out.write_record([
        "id",
        "src",
        "dst",
        "size",
        "release",
        "deadline",
        "phase",
        "iteration",
        "route",
        "effective_deadline",
        "sent",
        "arrival",
    ])?;
    let mut f = Field(String::new());
    for m in &rows.traffic.messages {
        let r = rows.message(m);
        out.write_field(f.num(r.id))?;
        out.write_field(f.num(r.src))?;
        out.write_field(f.list(m.dst.iter()))?;
        out.write_field(f.num(r.size))?;
        out.write_field(f.num(r.release))?;
        out.write_field(f.num(r.deadline))?;
        out.write_field(f.num(r.phase))?;
        out.write_field(f.num(r.iteration))?;
        out.write_field(match r.route {
            Some(Route::Path(nodes)) => f.list(nodes.iter()),
            Some(Route::Tree(edges)) => f.list(edges.iter().map(|(a, b)| format!("{a}->{b}"))),
            None => f.opt(None),
        })?;
        out.write_field(f.opt(r.effective_deadline))?;
        out.write_field(f.opt(r.sent))?;
        out.write_field(f.opt(r.arrival))?;
        out.write_record(None::<&[u8]>)?;
    }
    out.flush()?;
    Ok(())
}

/// `links.csv`: `from,to`, one row per directed link of the network, in the JSON's order.
pub fn links(rows: &Rows, w: impl Write) -> std::io::Result<()> {
    let mut out = writer(w);
    out.write_record(["from", "to"])?;
    let mut f = Field(String::new());
    for l in &rows.network.links {
        out.write_field(f.num(l.from))?;
        out.write_field(f.num(l.to))?;
        out.write_record(None::<&[u8]>)?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{self, Settings};
    use crate::traffic::Traffic;

    fn table(write: fn(&Rows, Vec<u8>) -> Vec<u8>) -> (String, serde_json::Value) {
        let mut b = Traffic::builder();
        let (a, c, d) = (b.task("a"), b.task("c"), b.task("d"));
        b.send(a, c, 4);
        b.send(c, d, 2);
        b.send(a, d, 3);
        let traffic = b.build();
        let mut settings = Settings::new();
        settings.set("network", "mesh:2x2").expect("a network");
        let cfg = pipeline::resolve(&traffic, &settings).expect("config");
        let plan = pipeline::plan(&traffic, &cfg).expect("plan");
        let doc: serde_json::Value =
            serde_json::from_str(&plan.to_json().expect("json")).expect("parses");
        let rows = Rows::new(
            &plan.traffic,
            &plan.network,
            &plan.placement.node_of,
            &plan.routing,
            &plan.schedule,
        );
        let text = String::from_utf8(write(&rows, Vec::new())).expect("utf-8");
        (text, doc)
    }

    #[test]
    fn schedule_rows_are_the_documents() {
        let (text, doc) = table(|r, mut w| {
            schedule(r, &mut w).expect("written");
            w
        });
        let json = doc["schedule"].as_array().expect("rows");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "msg,link,start,end");
        assert_eq!(lines.len(), json.len() + 1);
        for (line, row) in lines[1..].iter().zip(json) {
            let link = match row["link"].as_array().map(Vec::as_slice) {
                Some([kind, n]) if kind.is_string() => {
                    format!("{}@{n}", kind.as_str().unwrap_or(""))
                }
                Some([a, b]) => format!("{a}->{b}"),
                _ => panic!("a link is a pair: {row}"),
            };
            let want = format!("{},{link},{},{}", row["msg"], row["start"], row["end"]);
            assert_eq!(*line, want);
        }
    }

    #[test]
    fn message_and_link_rows_are_the_documents() {
        let (text, doc) = table(|r, mut w| {
            messages(r, &mut w).expect("written");
            w
        });
        let json = doc["messages"].as_array().expect("rows");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "id,src,dst,size,release,deadline,phase,iteration,route,effective_deadline,sent,arrival"
        );
        assert_eq!(lines.len(), json.len() + 1);
        for (line, row) in lines[1..].iter().zip(json) {
            let route: Vec<String> = row["route"]
                .as_array()
                .expect("a path")
                .iter()
                .map(|n| n.to_string())
                .collect();
            let f = |k: &str| row[k].to_string();
            let want = [
                f("id"),
                f("src"),
                f("dst"),
                f("size"),
                f("release"),
                f("deadline"),
                f("phase"),
                f("iteration"),
                route.join(" "),
                f("effective_deadline"),
                f("sent"),
                f("arrival"),
            ]
            .join(",");
            assert_eq!(*line, want);
        }
        let (text, doc) = table(|r, mut w| {
            links(r, &mut w).expect("written");
            w
        });
        let json = doc["network"]["links"].as_array().expect("links");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "from,to");
        assert_eq!(lines.len(), json.len() + 1);
        for (line, row) in lines[1..].iter().zip(json) {
            assert_eq!(*line, format!("{},{}", row[0], row[1]));
        }
    }
}
