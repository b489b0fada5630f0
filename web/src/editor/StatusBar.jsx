// The editor's status bar: the server's check (with the fix of an
// unlinked input), a link refused, a note (copied, pasted), and the counts
// of blocks, links and what is selected.
import { Button, Flex, Text } from '@radix-ui/themes';
import { CheckCircledIcon, CrossCircledIcon } from '@radix-ui/react-icons';
import { Choice } from '../components/fields.jsx';

/** The fix of an unlinked input (fix.js): a link from an output here, or a Constant. */
function FixActions({ fix }) {
  return (
    <Flex gap="2" align="center" className="fix-actions">
      {fix.sources.length > 0 && (
        <Choice label={`link into ${fix.into}`} className="fix-select" value="" placeholder="Link from…" options={fix.sources} onChange={fix.linkInto} />
      )}
      <Button size="1" variant="soft" onClick={fix.feedConstant}>
        Feed a Constant
      </Button>
    </Flex>
  );
}

/** `counts`: blocks, links and selected. */
export function StatusBar({ check, fix, refused, note, counts }) {
  return (
    <Flex className={check ? 'status status-error' : 'status'} align="center" gap="2" px="3">
      {check ? <CrossCircledIcon className="status-icon" /> : <CheckCircledIcon className="status-icon" />}
      {refused && (
        <Text size="1" color="amber" data-testid="refused" role="alert">
          {refused}
        </Text>
      )}
      <Text size="1" className="status-message" data-testid="check-status">
        {check ? check.message : 'model checks'}
      </Text>
      {fix && <FixActions fix={fix} />}
      <Text size="1" color="gray" className="status-counts" data-testid="status-counts">
        {note && `${note} · `}
        {counts.blocks} blocks · {counts.links} links
        {counts.selected > 0 && ` · ${counts.selected} selected`}
      </Text>
    </Flex>
  );
}
