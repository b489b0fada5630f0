// Radix Themes' Table.Root (size 1, surface) without the ScrollArea it
// brings, which adds an inline <style> element the page's content security
// policy blocks; Table.Header, Table.Row, Table.Cell… go inside it.

/** A Radix-styled table that scrolls sideways when it must. */
export function TableRoot({ className = '', children }) {
  return (
    <div className={`rt-TableRoot rt-r-size-1 rt-variant-surface ${className}`}>
      <div className="table-scroll">
        <table className="rt-TableRootTable">{children}</table>
      </div>
    </div>
  );
}
